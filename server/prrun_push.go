package server

import (
	"context"
	"log/slog"
	"sync"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// pusher is a listener that pushes the run branch after each checkpoint.
// Pushes happen on its own goroutine so a slow remote never holds up the
// engine (listeners must return quickly); checkpoints that arrive during
// a push coalesce into one more push. A failed push is logged and made
// good by the next one or by finish, which always pushes once more.
type pusher struct {
	attractor.NopListener
	log    *slog.Logger
	git    *gitops.Git
	repo   string // the mirror holding the branch
	url    string
	branch string
	start  string // the commit the branch was made at

	kick chan struct{}
	done chan struct{}
	stop func()
	once sync.Once
}

func newPusher(log *slog.Logger, git *gitops.Git, repo, url, branch, start string) *pusher {
	ctx, stop := context.WithCancel(context.Background())
	p := &pusher{log: log, git: git, repo: repo, url: url, branch: branch, start: start,
		kick: make(chan struct{}, 1), done: make(chan struct{}), stop: stop}
	go p.loop(ctx)
	return p
}

// Checkpointed asks for a push of the new checkpoint.
func (p *pusher) Checkpointed(context.Context, attractor.Checkpointed) error {
	select {
	case p.kick <- struct{}{}:
	default: // a push is already pending; it will include this commit
	}
	return nil
}

func (p *pusher) loop(ctx context.Context) {
	defer close(p.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		}
		// A push under way runs to its end even when finish stops the
		// loop: a push killed half-way can leave the remote's ref locked
		// for a moment, and the final push right after it would fail on
		// that lock. git's own timeout (gitops.Options.Timeout) bounds it.
		if err := p.git.Push(context.WithoutCancel(ctx), p.repo, p.url, p.branch); err != nil && ctx.Err() == nil {
			p.log.Warn("run: push after checkpoint failed; retried at the end", "branch", p.branch, "err", err)
		}
	}
}

// finish stops the background pushes (waiting for one under way) and
// pushes the branch once more,
// so the remote has the last checkpoint whatever happened before. A branch
// still at its start commit (the run failed before its first checkpoint)
// holds nothing of the run and is not pushed: it would only be a copy of
// the pull request's head under the run's name.
func (p *pusher) finish(ctx context.Context) error {
	p.once.Do(func() {
		p.stop()
		<-p.done
	})
	tip, err := p.git.BranchTip(ctx, p.repo, p.branch)
	if err != nil {
		return err
	}
	if tip == "" || tip == p.start {
		p.log.Info("run: no checkpoint on the run branch; not pushed", "branch", p.branch)
		return nil
	}
	return p.git.Push(ctx, p.repo, p.url, p.branch)
}
