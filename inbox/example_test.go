package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/inbox"
)

// The inbox over in-memory Grants, behind the program's own sign-in (here a
// header a proxy sets): it refuses whoever it cannot identify, and lists
// what waits.
func ExampleNew() {
	grants := approval.NewGrants()
	// A refund paused for approval (toolsafe's gate asks Grants this way).
	_, _ = grants.Decide(context.Background(), approval.CallInfo{
		Tool: "refund", CallID: "call_1", Input: `{"order":"A-1001","amount_eur":25}`, Attempt: 1, RunID: "run-7",
	})

	signedIn := func(r *http.Request) (string, bool) {
		user := r.Header.Get("X-Forwarded-User") // set by the sign-in proxy
		return user, user != ""
	}
	h, err := inbox.New(inbox.Memory(grants), signedIn)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/approvals/", http.StripPrefix("/approvals", h))

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/approvals/", nil))
	fmt.Println("nobody:", w.Code)

	r := httptest.NewRequest("GET", "/approvals/requests.json", nil)
	r.Header.Set("X-Forwarded-User", "alice")
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	var list struct {
		Requests []struct {
			Tool, Input, Reason string
			RunID               string `json:"run_id"`
		}
	}
	_ = json.Unmarshal(w.Body.Bytes(), &list)
	for _, q := range list.Requests {
		fmt.Printf("alice sees: %s %s in %s: %s\n", q.Tool, q.Input, q.RunID, q.Reason)
	}

	_, err = inbox.New(inbox.Memory(grants), nil)
	fmt.Println(err)
	// Output:
	// nobody: 403
	// alice sees: refund {"order":"A-1001","amount_eur":25} in run-7: no approval has been granted for this input
	// inbox: the identity function is nil: the inbox must know who decides; pass a func(*http.Request) (user string, ok bool) that reads your sign-in (session cookie, proxy header)
}

// What a person is shown of text an agent controls: the characters they
// could not see, or that reorder the text, as their codes, and why to look
// closely.
func ExampleReveal() {
	callID := "call_\u202efdp.exe" // shows as call_exe.pdf, raw
	fmt.Println(inbox.Reveal(callID))
	fmt.Println(inbox.Reveal(`{"amount_eur":"` + "\u202e" + `0052","payee":"Acme` + "\u200b" + `"}`))
	for _, w := range inbox.Warnings("the input", `{"payee":"p\u0430ypal"}`) {
		fmt.Println(w)
	}
	// Output:
	// call_\u202efdp.exe
	// {"amount_eur":"\u202e0052","payee":"Acme\u200b"}
	// The input has a value that mixes Latin and Cyrillic letters, which look alike: “pаypal” (а is not Latin).
}
