package attractor

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestProcessFailureNamesCancelCause: a node stopped because its run was
// superseded (or hit its run timeout) says so in its own reason, so its
// check can tell the user why, whichever of the node and the run reports
// first.
func TestProcessFailureNamesCancelCause(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("superseded by abc1234"))
	child, stop := context.WithCancel(ctx) // handlers run on derived contexts
	defer stop()
	o := processFailure(child, "verify command", 0, ExecResult{Canceled: true, ExitCode: -1})
	if o.FailureClass != ClassCanceled || o.FailureReason != "verify command was canceled: superseded by abc1234" {
		t.Errorf("outcome %s %q, want canceled naming the cause", o.FailureClass, o.FailureReason)
	}

	plain, cancelPlain := context.WithCancel(context.Background())
	cancelPlain()
	if o := processFailure(plain, "tool_command", 0, ExecResult{Canceled: true}); strings.Contains(o.FailureReason, "context canceled") {
		t.Errorf("a cancellation without a cause reads %q; want no context jargon", o.FailureReason)
	}
}
