package call

import (
	"context"

	"github.com/toolsafe/toolsafe/internal/fault"
)

// CutText names what cut the call short, for its log lines: the attempt
// timeout, the call's deadline or the caller's (see fault.CutText), or ""
// when no limit did. ctx is the context of the layer that logs, err what
// the layers inside it returned. The call's deadline, which ends a context
// inside that layer, is read from the call's record.
func (c *Call) CutText(ctx context.Context, err error) string {
	if c != nil && fault.HowEnded(ctx) != fault.ByCaller {
		if d := c.facts().deadline; d > 0 {
			return fault.LimitText(fault.ByDeadline, d)
		}
	}
	return fault.CutText(ctx, err)
}
