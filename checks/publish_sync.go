package checks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
)

// errBlocked is a round not sent because GitHub rate-limited the last one.
var errBlocked = errors.New("rate limited by GitHub")

// sync runs one round: it sends every pending change that is due (every
// one when force is set) and returns when the next held-back change falls
// due, or when to try again after an error (zero: nothing to wait for).
// It stops at the first temporary failure, since the next call would most
// likely fail too, and goes on past a refusal of one check.
func (p *Publisher) sync(ctx context.Context, force bool) (time.Time, error) {
	p.pubMu.Lock()
	defer p.pubMu.Unlock()
	if err := p.adoptIfNeeded(ctx); err != nil {
		p.warn(ctx, "", "looking for the run's check runs", err)
		return p.retryAt(err), err
	}
	now := p.opts.Now()
	p.mu.Lock()
	p.refreshLiveLocked(now)
	blocked, checks := p.blocked, slices.Clone(p.checks)
	p.mu.Unlock()
	if now.Before(blocked) {
		if force {
			return blocked, errBlocked
		}
		return blocked, nil
	}
	var next time.Time
	var errs []error
	for _, c := range checks {
		j, due, at := p.plan(c, now, force)
		if !due {
			next = earliest(next, at)
			continue
		}
		err := p.push(ctx, c, j)
		if err == nil {
			continue
		}
		p.warn(ctx, c.name, "updating check run", err)
		errs = append(errs, fmt.Errorf("check run %s: %w", c.name, err))
		next = earliest(next, p.retryAt(err))
		if temporary(err) {
			break
		}
	}
	return next, errors.Join(errs...)
}

// plan snapshots c's pending change and says whether it is due, and if it
// is held back, when it will be.
func (p *Publisher) plan(c *check, now time.Time, force bool) (j job, due bool, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !c.pending() {
		return job{}, false, time.Time{}
	}
	j = job{id: c.id, v: c.wantV, b: c.want, annsSent: c.annsSent}
	if c.want.completed() {
		j.anns = c.anns[min(c.annsSent, len(c.anns)):]
	}
	if force || c.urgent() {
		return j, true, time.Time{}
	}
	j.progress = true
	at = c.lastPut.Add(p.opts.Throttle)
	return j, !now.Before(at), at
}

// push sends j: a create or an update carrying the first annotations not
// yet sent, then one update per further batch of AnnotationsPerRequest.
// Progress is recorded after every accepted request, so a failure resends
// only what GitHub lacks.
func (p *Publisher) push(ctx context.Context, c *check, j job) error {
	batches := Batches(j.anns, AnnotationsPerRequest)
	var first []Annotation
	if len(batches) > 0 {
		first, batches = batches[0], batches[1:]
	}
	id := j.id
	if id == 0 {
		created, err := p.api.CreateCheckRun(ctx, p.repo, p.createBody(c, j.b, first))
		if err != nil {
			p.mu.Lock()
			c.tried, p.adopt = &j, true
			p.mu.Unlock()
			return err
		}
		id = created
		p.recordCreate(c, id, j, len(first))
	} else {
		sent, uctx := p.opts.Now(), ctx
		if j.progress {
			uctx = ghapp.Once(ctx)
		}
		if err := p.api.UpdateCheckRun(uctx, p.repo, id, p.updateBody(j.b, first)); err != nil {
			if errors.Is(err, ghapp.ErrNotFound) {
				p.forget(c, id)
			}
			return err
		}
		p.recordUpdate(c, id, j, len(first), sent)
	}
	for _, batch := range batches {
		u := ghapp.CheckRunUpdate{Output: p.ghOutput(j.b, batch)}
		if err := p.api.UpdateCheckRun(ctx, p.repo, id, u); err != nil {
			return err
		}
		p.mu.Lock()
		c.annsSent += len(batch)
		p.mu.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.id == id && c.sentV < j.v {
		c.sentV = j.v
	}
	return nil
}

// recordCreate notes that GitHub made c as j's body with n annotations.
func (p *Publisher) recordCreate(c *check, id int64, j job, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.id, c.tried, c.ghStatus, c.annsSent = id, nil, j.b.status, n
}

// recordUpdate notes that GitHub took j's body with n more annotations,
// sent at sent. Every update restarts the throttle's window from when it
// was sent, so that windows do not drift by a request's latency each:
// after a completion only cosmetic changes follow (a checkpoint link),
// and they can wait.
func (p *Publisher) recordUpdate(c *check, id int64, j job, n int, sent time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.id != id {
		return
	}
	c.ghStatus = j.b.status
	c.annsSent += n
	c.lastPut = sent
}

// forget drops a check run GitHub no longer knows, so that the next round
// creates it again with all of its annotations.
func (p *Publisher) forget(c *check, id int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.id == id {
		c.id, c.ghStatus, c.annsSent, c.sentV = 0, "", 0, 0
	}
}

// adoptIfNeeded looks for check runs this run made before (a restart, or
// a create that failed but may have gone through) and takes them over
// instead of creating duplicates.
func (p *Publisher) adoptIfNeeded(ctx context.Context) error {
	p.mu.Lock()
	need := p.adopt
	p.mu.Unlock()
	if !need {
		return nil
	}
	runs, err := p.api.ListCheckRunsForRef(ctx, p.repo, p.headSHA, "")
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.adopt = false
	taken := map[int64]bool{}
	for _, c := range p.checks {
		taken[c.id] = true
	}
	for _, c := range p.checks {
		if c.id != 0 || c.dropped {
			continue
		}
		// Newest first, so a node's latest visit wins.
		i := slices.IndexFunc(runs, func(r ghapp.CheckRun) bool {
			return !taken[r.ID] && r.Name == c.name && r.ExternalID == c.externalID
		})
		if i < 0 {
			continue
		}
		taken[runs[i].ID] = true
		p.adoptLocked(c, runs[i])
	}
	p.adoptUnknownLocked(runs, taken)
	return nil
}

// adoptUnknownLocked takes over the verify checks of this run that the
// Publisher does not know: a host that stops a queued run before its
// pipeline was loaded makes its Publisher without the graph, yet the
// checks created at enqueue time must complete with the rest. They are
// found by external_id "<run-id>/<node-id>" and the name of this run's
// summary check. The caller holds mu.
func (p *Publisher) adoptUnknownLocked(runs []ghapp.CheckRun, taken map[int64]bool) {
	prefix := p.runID + "/"
	var added []string
	for _, r := range runs {
		node, ok := strings.CutPrefix(r.ExternalID, prefix)
		if !ok || node == "" || taken[r.ID] || r.Name != p.summary.name+"/"+node || p.verify[node] != nil {
			continue
		}
		if p.rec.View().Node(node) != nil {
			continue // a node of the graph that is no verify node
		}
		taken[r.ID] = true
		p.rec.addVerify(node)
		c := &check{node: node, name: r.Name, externalID: r.ExternalID}
		p.verify[node] = c
		p.checks = append(p.checks, c)
		p.adoptLocked(c, r)
		added = append(added, node)
	}
	if len(added) > 0 {
		p.renderLocked(p.rec.View(), added, false)
	}
}

// adoptLocked makes c stand for the check run r. The caller holds mu.
func (p *Publisher) adoptLocked(c *check, r ghapp.CheckRun) {
	c.id, c.ghStatus = r.ID, r.Status
	if t := c.tried; t != nil {
		// Our own create went through: GitHub has what it carried.
		c.tried = nil
		c.annsSent = t.annsSent + min(len(t.anns), AnnotationsPerRequest)
		if t.v == c.wantV && c.annsSent == len(c.anns) {
			c.sentV = t.v
		}
		return
	}
	// A run from before a restart: its output is sent again, unless it
	// completed; what it showed then cannot be known, and a completed
	// check must not go back to queued.
	if r.Status == StatusCompleted {
		c.frozen = true
	}
}

// temporary reports whether err is worth retrying the whole round for
// later: a server error, a network failure, a rate limit. A refusal (a
// 4xx) concerns the one check.
func temporary(err error) bool {
	var ge *ghapp.Error
	if !errors.As(err, &ge) {
		return true
	}
	var rl *ghapp.RateLimitedError
	return errors.As(err, &rl) || ge.Status == 0 || ge.Status >= http.StatusInternalServerError
}

// retryAt is when to try again after err; a rate limit also blocks the
// rounds until it has passed.
func (p *Publisher) retryAt(err error) time.Time {
	now := p.opts.Now()
	var rl *ghapp.RateLimitedError
	if errors.As(err, &rl) {
		until := now.Add(rl.Wait)
		p.mu.Lock()
		p.blocked = until
		p.mu.Unlock()
		return until
	}
	return now.Add(p.opts.Throttle)
}

// finish brings every check up to date, forcing throttled updates out,
// for at most CloseAttempts rounds, waiting between them.
func (p *Publisher) finish(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		next, err := p.sync(ctx, true)
		if err == nil {
			return nil
		}
		if attempt >= p.opts.CloseAttempts {
			return fmt.Errorf("checks: run %s: some check runs are not up to date after %d attempts: %w", p.runID, attempt, err)
		}
		d := next.Sub(p.opts.Now())
		if !errors.Is(err, errBlocked) && !isRateLimited(err) {
			d = backoff(attempt)
		}
		if serr := p.opts.Sleep(ctx, max(d, 0)); serr != nil {
			return fmt.Errorf("checks: run %s: some check runs are not up to date: %w", p.runID, errors.Join(err, serr))
		}
	}
}

func isRateLimited(err error) bool {
	var rl *ghapp.RateLimitedError
	return errors.As(err, &rl)
}

// backoff is the wait before round attempt+1 of finish: 1s, 2s, 4s, …
// capped at 30s. ghapp has already retried each call with its own backoff.
func backoff(attempt int) time.Duration {
	return min(time.Second<<min(attempt-1, 5), 30*time.Second)
}

// earliest is the earlier of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// warn logs a failed call; the run goes on regardless.
func (p *Publisher) warn(ctx context.Context, check, what string, err error) {
	p.log.WarnContext(ctx, "checks: "+what+" failed; will retry", logCheck, check,
		logErr, p.opts.Render.Redactor.Redact(err.Error()))
}

// sleepContext waits for d or until ctx ends.
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
