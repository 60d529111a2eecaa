package toolsafe_test

import (
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolsafe/toolsafe/toolsafetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// noKeepAlive is toolsafetest.NoKeepAliveClient for config_agent_test.go,
// which uses it until the policies file and its tests move to their own
// package; then it goes.
func noKeepAlive() *http.Client { return toolsafetest.NoKeepAliveClient() }
