package approval_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/middleware"
)

// The wire form keeps every field, whether the pause is marshalled as a
// pointer or a value, and refuses what it cannot carry as it is.
func TestRequiredHasAWireForm(t *testing.T) {
	ar := approval.Required{Tool: "refund", CallID: "c1", Input: `{"order":"A-1"}`, Reason: "why",
		Attempt: 2, IdempotencyKey: "k", RunID: "run-1", Err: errors.New("down")}
	byPointer, err := json.Marshal(&ar)
	if err != nil {
		t.Fatal(err)
	}
	byValue, _ := json.Marshal(ar)
	if string(byPointer) != string(byValue) {
		t.Errorf("a value marshals as %s, a pointer as %s", byValue, byPointer)
	}
	var back approval.Required
	if err := json.Unmarshal(byPointer, &back); err != nil {
		t.Fatal(err)
	}
	var re *approval.RemoteError
	if !errors.As(back.Err, &re) || re.Message != "down" {
		t.Errorf("Err came back as %#v", back.Err)
	}
	back.Err, ar.Err = nil, nil
	if back != ar {
		t.Errorf("round trip: %+v; want %+v", back, ar)
	}
	if data, _ := json.Marshal(approval.Required{Tool: "t", Input: ""}); string(data) != `{"tool":"t","input":""}` {
		t.Errorf("the least pause: %s", data)
	}

	var ae *middleware.ArgsError
	if _, err := json.Marshal(&approval.Required{Tool: "t", Input: "\xff"}); !errors.As(err, &ae) {
		t.Errorf("an input that is not UTF-8: %v; want it refused, not changed", err)
	}
	for _, bad := range []string{`{}`, `{"tool":""}`, `[1]`, `"refund"`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil || !strings.Contains(err.Error(), "approval:") {
			t.Errorf("Unmarshal(%s): %v; want an error", bad, err)
		}
	}
}
