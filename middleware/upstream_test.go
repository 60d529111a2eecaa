package middleware_test

import (
	"strings"
	"testing"

	"github.com/toolsafe/toolsafe/middleware"
)

// An upstream's own message is the model's: Error has it verbatim, while
// Reason and MessageWithoutArguments, what spans get, give only its size.
func TestAnUpstreamMessageReachesTheModelButNotASpan(t *testing.T) {
	text := "ENOENT: no such file or directory, open '/home/alice/secret-plan.txt'"
	err := middleware.UpstreamToolError(text)
	if kind, retry := middleware.Classify(err); kind != middleware.KindToolError || retry {
		t.Fatalf("kind %s, retryable %v; want tool-error, not retried", kind, retry)
	}
	f := &middleware.Failure{Kind: middleware.KindToolError, Tool: "read_file", Attempts: 1, Cause: err}
	if got := f.Error(); got != text {
		t.Errorf("the model sees %q; want the server's text verbatim", got)
	}
	for what, got := range map[string]string{
		"Reason":                  middleware.Reason(err),
		"MessageWithoutArguments": f.MessageWithoutArguments(),
	} {
		if strings.Contains(got, "secret-plan") || !strings.Contains(got, "69 bytes") {
			t.Errorf("%s = %q; want the text withheld and its size (69 bytes)", what, got)
		}
	}
}
