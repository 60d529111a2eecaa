package webhook_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/toolsafe/toolsafe/inbox/webhook"
)

// A chat's incoming-webhook URL is a credential (Slack's
// hooks.slack.com/services/T…/B…/SECRET): a failed POST must not carry it
// in its error, which Watch logs and a program may log too.
func TestAFailedPostDoesNotTellTheWebhooksURL(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connection refused
	const token = "XXXXsecretTOKEN"
	n, err := webhook.New("http://"+addr+"/services/T000/B000/"+token, secret, webhook.WithRetries(0, time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	err = n.Send(t.Context(), webhook.Event{Event: "waiting", RequestID: "1.ab"})
	if err == nil {
		t.Fatal("a POST to nothing was delivered")
	}
	if strings.Contains(err.Error(), token) {
		t.Fatalf("the error tells the webhook's secret URL: %v", err)
	}
}
