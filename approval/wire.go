package approval

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolsafe/toolsafe/canonical"
)

// requiredWire is the JSON form of a Required; see MarshalJSON.
type requiredWire struct {
	Tool           string `json:"tool"`
	CallID         string `json:"call_id,omitempty"`
	Input          string `json:"input"`
	Sends          string `json:"sends,omitempty"`
	Reason         string `json:"reason,omitempty"`
	Attempt        int    `json:"attempt,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	RunID          string `json:"run_id,omitempty"`
	Error          string `json:"error,omitempty"`
}

// MarshalJSON writes the pause in its wire form, for a program that carries
// it to another process (a queue, a database) and resumes it there with
// run.Resume: one JSON object with the fields "tool", "input" (always),
// "call_id", "sends", "reason", "attempt", "idempotency_key", "run_id" and
// "error" (when set); "error" is Err's text, for the program and its logs, never
// for the model. The names are stable. It returns an error for an Input
// that is not UTF-8 text (canonical.CheckText), which JSON would change.
func (e Required) MarshalJSON() ([]byte, error) {
	for _, text := range []string{e.Input, e.Sends} {
		if err := canonical.CheckText(text); err != nil {
			return nil, fmt.Errorf("approval: the pause of %s cannot be written as JSON: %w", e.Tool, err)
		}
	}
	w := requiredWire{Tool: e.Tool, CallID: e.CallID, Input: e.Input, Sends: e.Sends, Reason: e.Reason,
		Attempt: e.Attempt, IdempotencyKey: e.IdempotencyKey, RunID: e.RunID}
	if e.Err != nil {
		w.Error = e.Err.Error()
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the wire form MarshalJSON writes, ignoring fields it
// does not know. Err, when "error" is set, is an error with that text
// (RemoteError): its type and chain stay in the process that paused. It
// returns an error for JSON that is not an object with a "tool".
func (e *Required) UnmarshalJSON(data []byte) error {
	var w requiredWire
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("approval: a pause in JSON: %w", err)
	}
	if w.Tool == "" {
		return errors.New(`approval: a pause in JSON has no "tool": it was not written by Required.MarshalJSON`)
	}
	*e = Required{Tool: w.Tool, CallID: w.CallID, Input: w.Input, Sends: w.Sends, Reason: w.Reason,
		Attempt: w.Attempt, IdempotencyKey: w.IdempotencyKey, RunID: w.RunID}
	if w.Error != "" {
		e.Err = &RemoteError{Message: w.Error}
	}
	return nil
}

// RemoteError is the Err of a Required read from JSON: the text of the
// approver's error in the process that paused. Its text is for the program
// and logs, never for the model.
type RemoteError struct {
	// Message is the original error's text.
	Message string
}

// Error returns Message.
func (e *RemoteError) Error() string { return e.Message }
