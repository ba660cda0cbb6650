package checks

import (
	"time"

	"github.com/kilroy-bot/kilroy-bot/ghapp"
)

// gate is the summary check's body when the host concludes the run
// without running it.
type gate struct {
	body      body
	anns      []Annotation
	skipTitle string // the title of verify checks that exist already
}

// body is what one check run should show.
type body struct {
	status, conclusion   string
	title, summary, text string
	startedAt            time.Time
	completedAt          time.Time
	// resumable: a failed run that can be re-run from its failure.
	resumable bool
}

func (b body) completed() bool { return b.status == StatusCompleted }

// check is one check run: the body it should show (want) and how much of
// it GitHub has. Fields are guarded by Publisher.mu.
type check struct {
	name, externalID string
	node             string // "" for the summary check

	want  body
	wantV int // bumped whenever want changes
	// anns are the annotations of the completion, fixed when want first
	// completes: a node's findings do not change once it finished.
	anns    []Annotation
	started time.Time // when the check first left queued
	ended   time.Time // when it first completed

	id       int64     // 0 until created or adopted
	sentV    int       // the version of want GitHub has, annotations included
	annsSent int       // how many of anns GitHub has
	ghStatus string    // the status GitHub has; "" before creation
	lastPut  time.Time // the last update, for the throttle
	// tried is the create that failed last, which may have happened
	// anyway; adoption takes a run it finds as that create's result.
	tried *job
	// frozen: adopted already completed; left as it is.
	frozen bool
	// dropped: not to be created (the host concluded without running).
	dropped bool
}

// closed reports whether the check is done with: a later visit of its
// node needs a new check run.
func (c *check) closed() bool { return c.frozen || c.want.completed() }

// pending reports whether GitHub lacks some of want.
func (c *check) pending() bool {
	return !c.frozen && !c.dropped && c.sentV != c.wantV
}

// urgent reports whether the pending change is one the throttle never
// holds back: a creation, a change of status (queued to in_progress as
// much as a completion) and the annotations of a completion. The
// throttle is for progress within a status; a reader must not see an
// adopted check stay queued after its node has started.
func (c *check) urgent() bool {
	return c.id == 0 || c.want.status != c.ghStatus || (c.want.completed() && c.annsSent < len(c.anns))
}

// job is a snapshot of one check's pending change, taken under mu and sent
// without it.
type job struct {
	id       int64
	v        int
	b        body
	anns     []Annotation // those not yet sent
	annsSent int
	// progress: an update that only shows progress, which the next one
	// supersedes; it is sent once (ghapp.Once), never late.
	progress bool
}

// setWant makes b (with anns when it completes) the check's body, and
// returns the check that now stands for it: a new one when c is closed
// and b is under way, that is when a node runs again. The caller holds mu.
func (p *Publisher) setWant(c *check, b body, anns []Annotation) *check {
	if c.closed() && !b.completed() {
		if b.status == StatusQueued {
			return c // not started again (yet): nothing new to show
		}
		c = p.successor(c)
	}
	if c.frozen {
		return c
	}
	now := p.opts.Now()
	if b.status != StatusQueued && c.started.IsZero() {
		c.started = now
	}
	if b.completed() && c.ended.IsZero() {
		c.ended = now
	}
	if b.status != StatusQueued {
		b.startedAt = c.started
	}
	if b.completed() {
		b.completedAt = c.ended
		if !c.want.completed() {
			c.anns = anns
		}
	}
	if b != c.want {
		c.want = b
		c.wantV++
	}
	return c
}

// successor starts a new check run with c's name for a new visit. c stays
// in the list until GitHub has all of it. The caller holds mu.
func (p *Publisher) successor(c *check) *check {
	n := &check{name: c.name, externalID: c.externalID, node: c.node, dropped: c.dropped}
	p.checks = append(p.checks, n)
	if c == p.summary {
		p.summary = n
	} else {
		p.verify[c.node] = n
	}
	return n
}

// renderLocked recomputes the bodies of the summary check and of the
// verify checks of nodes (all of them when all is set) from v. The
// caller holds mu.
func (p *Publisher) renderLocked(v *RunView, nodes []string, all bool) {
	if p.gate != nil {
		p.setWant(p.summary, p.gate.body, p.gate.anns)
	} else {
		p.setWant(p.summary, p.summaryBody(v), nil)
	}
	if all {
		nodes = nodes[:0]
		for _, n := range v.Nodes {
			if p.verify[n.ID] != nil {
				nodes = append(nodes, n.ID)
			}
		}
	}
	for _, id := range nodes {
		c := p.verify[id]
		if c == nil || c.dropped {
			continue
		}
		if p.gate != nil {
			p.setWant(c, body{status: StatusCompleted, conclusion: ConclusionSkipped,
				title: p.gate.skipTitle, summary: p.gate.body.summary}, nil)
			continue
		}
		rep := VerifyCheck(v, id, p.opts.Render)
		p.setWant(c, body{status: rep.Status, conclusion: rep.Conclusion, title: rep.Title,
			summary: rep.Summary, text: rep.Text}, rep.Annotations)
	}
}

// summaryBody is the kilroy/<pipeline> check's body.
func (p *Publisher) summaryBody(v *RunView) body {
	status, conclusion := RunConclusion(v)
	title, summary, text := Summary(v, p.opts.Render)
	return p.withLive(v, body{status: status, conclusion: conclusion, title: title, summary: summary, text: text,
		resumable: Resumable(v)})
}

// actions are the buttons of a check: Cancel only while it runs.
func actions(b body) []ghapp.CheckRunAction {
	if b.resumable {
		return []ghapp.CheckRunAction{rerunAction, rerunFailedAction}
	}
	if b.completed() {
		return []ghapp.CheckRunAction{rerunAction}
	}
	return []ghapp.CheckRunAction{rerunAction, cancelAction}
}

// ghOutput is b's output carrying anns, its summary under the host's
// banner line when there is one.
func (p *Publisher) ghOutput(b body, anns []Annotation) *ghapp.CheckRunOutput {
	summary := b.summary
	if banner := p.opts.Render.Banner; banner != "" {
		summary = Truncate(banner+"\n\n"+summary, MaxOutput, p.details)
	}
	o := &ghapp.CheckRunOutput{Title: b.title, Summary: summary, Text: b.text}
	for _, a := range anns {
		o.Annotations = append(o.Annotations, ghapp.Annotation{
			Path: a.Path, StartLine: a.StartLine, EndLine: a.EndLine, StartColumn: a.StartColumn,
			EndColumn: a.EndColumn, Level: a.Level, Message: a.Message, Title: a.Title, RawDetails: a.RawDetails,
		})
	}
	return o
}

// createBody creates c showing b with the first annotations.
func (p *Publisher) createBody(c *check, b body, anns []Annotation) ghapp.CheckRunCreate {
	return ghapp.CheckRunCreate{
		Name: c.name, HeadSHA: p.headSHA, Status: b.status, Conclusion: b.conclusion,
		StartedAt: b.startedAt, CompletedAt: b.completedAt, DetailsURL: p.details,
		ExternalID: c.externalID, Output: p.ghOutput(b, anns), Actions: actions(b),
	}
}

// updateBody changes a check to b, appending anns.
func (p *Publisher) updateBody(b body, anns []Annotation) ghapp.CheckRunUpdate {
	return ghapp.CheckRunUpdate{
		Status: b.status, Conclusion: b.conclusion, StartedAt: b.startedAt, CompletedAt: b.completedAt,
		DetailsURL: p.details, Output: p.ghOutput(b, anns), Actions: actions(b),
	}
}
