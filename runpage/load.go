package runpage

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Run is what the page shows of one run.
type Run struct {
	ID        string
	Pipeline  string
	Status    string // queued, running, success, fail, finished, interrupted
	Reason    string
	Branch    string
	BaseSHA   string
	Commit    Commit // the last checkpoint
	UpdatedAt time.Time
	// StartedAt and FinishedAt come from progress.ndjson; Now is when the
	// page was loaded, for the time a run still going has taken so far.
	StartedAt, FinishedAt, Now time.Time
	// Source is the repository, pull request and commit the run tested.
	Source Source
	// Image is the image the run's nodes run in; zero in the host jail.
	Image Image
	Nodes []Node
	// Events are the last progress events, oldest first; EventsOmitted
	// counts those before them.
	Events        []Event
	EventsOmitted int
	Report        string
	// Usage sums the run's agent attempts (usage.go).
	Usage attractor.UsageTotal
	// Problems are files that could not be read or parsed; the page still
	// shows the rest.
	Problems []string
	// LiveURL is the page's event stream with its token (live.go), which
	// the server sets; "" leaves the page without live.js.
	LiveURL string
}

// Image is a run's root filesystem: the reference as chosen and the
// digest the run pinned when it started, which a resume keeps.
type Image struct {
	Ref, Digest string
}

// imageFile is checkpoint.json's image (runner.RunImage).
type imageFile struct {
	Ref    string `json:"ref"`
	Pinned struct {
		Digest string `json:"digest"`
	} `json:"pinned"`
}

// shownRef is an image reference as the page shows it: a local source
// ("oci-archive:/path/x.tar", kilroy-bot run's) by its file's name only,
// so that the page names no path of the machine.
func shownRef(ref string) string {
	for _, prefix := range []string{"oci:", "oci-archive:", "docker-archive:"} {
		if p, ok := strings.CutPrefix(ref, prefix); ok {
			return prefix + filepath.Base(p)
		}
	}
	return ref
}

// Commit is a checkpoint commit and its link ("" when none).
type Commit struct {
	SHA, URL string
}

// Short is the 7-character SHA git prints.
func (c Commit) Short() string {
	if len(c.SHA) > 7 {
		return c.SHA[:7]
	}
	return c.SHA
}

// Live reports whether the run may still change: the page reloads itself
// while it is.
func (r *Run) Live() bool { return r.Status == "queued" || r.Status == "running" }

// Total is the run's time: start to finish, or start to now while it goes.
func (r *Run) Total() time.Duration {
	switch {
	case r.StartedAt.IsZero():
		return 0
	case !r.FinishedAt.IsZero():
		return r.FinishedAt.Sub(r.StartedAt)
	case r.Live():
		return r.Now.Sub(r.StartedAt)
	}
	return 0
}

// Node is one row of the node table.
type Node struct {
	ID       string
	Label    string // the graph's label when it differs from ID
	Dir      string // stage directory name under nodes/
	Status   string
	Reason   string
	Attempts int
	Duration time.Duration
	Commit   Commit
	Logs     []Log
	Usage    attractor.UsageTotal // its agent attempts'
}

// Written are the node's logs that have text, the ones the page shows.
func (n Node) Written() []Log {
	var out []Log
	for _, l := range n.Logs {
		if l.Text != "" {
			out = append(out, l)
		}
	}
	return out
}

// Empty names the node's empty logs, which the page folds into one line.
func (n Node) Empty() []string {
	var out []string
	for _, l := range n.Logs {
		if l.Text == "" {
			out = append(out, l.Name)
		}
	}
	return out
}

// Log is the end of one of a node's log files.
type Log struct {
	Name    string
	Text    string
	Omitted int64 // about how many bytes before Text are not shown (redaction changes lengths)
}

// Event is one line of progress.ndjson.
type Event struct {
	Time   time.Time
	Type   string
	Node   string
	Status string
	Detail string
}

// maxEvents is how many progress events the page lists.
const maxEvents = 300

// checkpointFile holds the fields of checkpoint.json (runner.Checkpoint)
// the page shows. It is decoded here rather than with runner's type so the
// page does not pull in the runner (processes, git, agents) to read JSON.
type checkpointFile struct {
	RunID     string           `json:"run_id"`
	Pipeline  string           `json:"pipeline"`
	Branch    string           `json:"branch"`
	BaseSHA   string           `json:"base_sha"`
	CommitSHA string           `json:"commit_sha"`
	UpdatedAt time.Time        `json:"updated_at"`
	State     *attractor.State `json:"state"`
	Image     *imageFile       `json:"image"`
}

// progressEvent is a progress.ndjson line as runner.Progress writes it.
type progressEvent struct {
	Time       time.Time        `json:"time"`
	Type       string           `json:"type"`
	Pipeline   string           `json:"pipeline"`
	Node       string           `json:"node"`
	Attempt    int              `json:"attempt"`
	Status     string           `json:"status"`
	Reason     string           `json:"reason"`
	DurationMS int64            `json:"duration_ms"`
	From       string           `json:"from"`
	To         string           `json:"to"`
	Method     string           `json:"method"`
	SHA        string           `json:"sha"`
	BaseSHA    string           `json:"base_sha"`
	Branch     string           `json:"branch"`
	Usage      *attractor.Usage `json:"usage"`
}

// Load reads the run directory of id. It fails with ErrInvalidID for an id
// that is not a run id and ErrNotFound when no such run exists; files
// missing or broken inside an existing run are noted in Run.Problems. It
// checks no token: requests go through Open.
func (p *Pages) Load(id string) (*Run, error) {
	if !ValidID(id) {
		return nil, ErrInvalidID
	}
	dir := filepath.Join(p.opts.RunsDir, id)
	// os.OpenRoot's error for a file is not ENOTDIR, so look first.
	if st, err := os.Stat(dir); notExist(err) || (err == nil && !st.IsDir()) {
		return nil, ErrNotFound
	}
	root, err := os.OpenRoot(dir)
	if notExist(err) {
		return nil, ErrNotFound // removed since the Stat
	}
	if err != nil {
		return nil, fmt.Errorf("runpage: open run %s: %w", id, err)
	}
	defer root.Close()
	b := &builder{p: p, root: root, run: &Run{ID: id, Status: "queued", Now: p.opts.Now()}, byID: map[string]*Node{}}
	if p.opts.Source != nil {
		b.run.Source = p.opts.Source(id)
	}
	b.checkpoint()
	b.progress()
	b.stages()
	b.report()
	labels := b.labels()
	for _, id := range b.order {
		n := *b.byID[id]
		if l := labels[id]; l != id {
			n.Label = l
		}
		b.run.Nodes = append(b.run.Nodes, n)
	}
	b.interrupted()
	return b.run, nil
}

// Interrupted is the status of a run whose files say it is going but that
// no process works on or will resume.
const Interrupted = "interrupted"

// interrupted marks a run that looks live but is not active as
// interrupted, with its running nodes.
func (b *builder) interrupted() {
	r := b.run
	if !r.Live() || b.p.opts.Active == nil || b.p.opts.Active(r.ID) {
		return
	}
	r.Status = Interrupted
	r.Reason = cmp.Or(r.Reason, "the process running it stopped before the run finished, and no server will resume it: "+
		"push again or re-run the check to start a new run")
	for i := range r.Nodes {
		if r.Nodes[i].Status == "running" || r.Nodes[i].Status == "retrying" {
			r.Nodes[i].Status = Interrupted
		}
	}
}

// builder assembles a Run from the files of one run directory.
type builder struct {
	p     *Pages
	root  *os.Root
	run   *Run
	byID  map[string]*Node
	order []string
}

func (b *builder) problem(format string, args ...any) {
	b.run.Problems = append(b.run.Problems, b.p.opts.Redactor.Redact(fmt.Sprintf(format, args...)))
}

func (b *builder) node(id string) *Node {
	n, ok := b.byID[id]
	if !ok {
		n = &Node{ID: id, Dir: stageDirName(id)}
		b.byID[id] = n
		b.order = append(b.order, id)
	}
	return n
}

func (b *builder) commit(sha string) Commit {
	c := Commit{SHA: sha}
	if sha != "" && b.p.opts.CommitURL != nil {
		c.URL = b.p.opts.CommitURL(b.run.ID, sha)
	}
	return c
}

// checkpoint reads checkpoint.json through the root rather than with
// runner.ReadCheckpoint, which opens by path and so would follow a link
// out of the run; the page needs no policy snapshot check either.
func (b *builder) checkpoint() {
	data, cut, err := tail(b.root, "checkpoint.json", maxCheckpoint)
	switch {
	case notExist(err):
		return
	case err != nil:
		b.problem("checkpoint.json: %v", err)
		return
	case cut > 0:
		b.problem("checkpoint.json: larger than %d bytes, not shown", maxCheckpoint)
		return
	}
	var cp checkpointFile
	if err := json.Unmarshal(data, &cp); err != nil {
		b.problem("checkpoint.json: %v", err)
		return
	}
	if cp.State == nil {
		b.journal(&cp)
	}
	r := b.run
	r.Pipeline, r.Branch, r.BaseSHA, r.UpdatedAt = cp.Pipeline, cp.Branch, cp.BaseSHA, cp.UpdatedAt
	r.Commit = b.commit(cp.CommitSHA)
	if cp.Image != nil {
		r.Image = Image{Ref: shownRef(cp.Image.Ref), Digest: cp.Image.Pinned.Digest}
	}
	r.Status = "running"
	if cp.State == nil {
		return
	}
	if cp.State.Finished {
		r.Status = "finished"
	}
	for _, id := range cp.State.Completed {
		n := b.node(id)
		if o, ok := cp.State.Outcomes[id]; ok {
			n.Status, n.Reason = string(o.Status), b.p.opts.Redactor.Redact(o.FailureReason)
		}
	}
}

// progress reads progress.ndjson: it knows attempts, durations, commits
// and what is running now, which the checkpoint does not.
func (b *builder) progress() {
	data, cut, err := tail(b.root, "progress.ndjson", maxProgress)
	if notExist(err) {
		return
	}
	if err != nil {
		b.problem("progress.ndjson: %v", err)
		return
	}
	var evs []Event
	bad := 0
	for _, line := range lines(data, cut > 0) {
		var ev progressEvent
		if json.Unmarshal(line, &ev) != nil {
			bad++ // a line being written right now, or damage
			continue
		}
		b.apply(ev)
		evs = append(evs, b.event(ev))
	}
	if bad > 0 {
		b.problem("progress.ndjson: %d unreadable lines skipped", bad)
	}
	if cut > 0 {
		b.problem("progress.ndjson: only its last %d bytes were read", maxProgress)
	}
	if len(evs) > maxEvents {
		b.run.EventsOmitted = len(evs) - maxEvents
		evs = evs[len(evs)-maxEvents:]
	}
	b.run.Events = evs
}

func (b *builder) apply(ev progressEvent) {
	r := b.run
	redact := b.p.opts.Redactor.Redact
	switch ev.Type {
	case "run_started":
		r.Status = "running"
		if r.StartedAt.IsZero() { // a resumed run keeps its first start
			r.StartedAt = ev.Time
		}
		r.Pipeline = cmp.Or(r.Pipeline, ev.Pipeline)
		r.Branch, r.BaseSHA = cmp.Or(r.Branch, ev.Branch), cmp.Or(r.BaseSHA, ev.BaseSHA)
	case "node_started":
		if r.Status == "queued" {
			r.Status = "running"
		}
		b.node(ev.Node).Status = "running"
	case "attempt_finished", "node_finished":
		n := b.node(ev.Node)
		n.Attempts++
		n.Duration += time.Duration(ev.DurationMS) * time.Millisecond
		n.Status, n.Reason = ev.Status, redact(ev.Reason)
		b.addUsage(n, ev)
		if ev.Type == "attempt_finished" {
			n.Status = "retrying"
		}
	case "checkpoint":
		b.node(ev.Node).Commit = b.commit(ev.SHA)
		if r.Commit.SHA == "" {
			r.Commit = b.commit(ev.SHA)
		}
	case "run_finished":
		r.Status, r.Reason = ev.Status, redact(ev.Reason)
		r.FinishedAt = ev.Time
	}
}

func (b *builder) event(ev progressEvent) Event {
	e := Event{Time: ev.Time, Type: ev.Type, Node: ev.Node, Status: ev.Status}
	var parts []string
	if ev.Attempt > 0 {
		parts = append(parts, fmt.Sprintf("attempt %d", ev.Attempt))
	}
	if ev.DurationMS > 0 {
		parts = append(parts, formatDuration(time.Duration(ev.DurationMS)*time.Millisecond))
	}
	if ev.From != "" || ev.To != "" {
		parts = append(parts, fmt.Sprintf("%s → %s (%s)", ev.From, ev.To, ev.Method))
	}
	if ev.SHA != "" {
		parts = append(parts, "commit "+Commit{SHA: ev.SHA}.Short())
	}
	if ev.Branch != "" {
		parts = append(parts, "branch "+ev.Branch)
	}
	if ev.Reason != "" {
		parts = append(parts, firstLine(ev.Reason))
	}
	e.Detail = b.p.opts.Redactor.Redact(strings.Join(parts, "; "))
	return e
}

// stages reads every stage directory: its status.json for nodes the other
// files do not know yet, and the end of each of its logs.
func (b *builder) stages() {
	dirs, err := b.readDir("nodes")
	if notExist(err) {
		return
	}
	if err != nil {
		b.problem("nodes: %v", err)
		return
	}
	byDir := map[string]*Node{}
	for _, id := range b.order {
		byDir[b.byID[id].Dir] = b.byID[id]
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		n, ok := byDir[d.Name()]
		if !ok {
			n = b.node(d.Name()) // a node only its stage directory knows, or a branch's copy
		}
		b.stage(n)
	}
}

func (b *builder) stage(n *Node) {
	dir := "nodes/" + n.Dir
	if n.Status == "" {
		if data, _, err := tail(b.root, dir+"/status.json", maxStatus); err == nil {
			var o attractor.Outcome
			if json.Unmarshal(data, &o) == nil {
				n.Status, n.Reason = string(o.Status), b.p.opts.Redactor.Redact(o.FailureReason)
			}
		}
	}
	entries, err := b.readDir(dir)
	if err != nil {
		b.problem("%s: %v", dir, err)
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		t, err := b.p.redactedTail(b.root, dir+"/"+e.Name(), b.p.opts.LogTail)
		if err != nil {
			b.problem("%s/%s: %v", dir, e.Name(), err)
			continue
		}
		n.Logs = append(n.Logs, Log{Name: e.Name(), Text: t.s, Omitted: t.cut})
	}
	b.transcript(n, dir, entries)
	slices.SortFunc(n.Logs, func(x, y Log) int { return logRank(x.Name) - logRank(y.Name) })
}

// logRank puts stdout.log and stderr.log first, then the rest by name
// (ReadDir returns names sorted, and the sort is stable).
func logRank(name string) int {
	switch name {
	case "stdout.log":
		return 0
	case "stderr.log":
		return 1
	}
	return 2
}

func (b *builder) report() {
	t, err := b.p.redactedTail(b.root, "report.md", maxReport)
	if notExist(err) {
		return
	}
	if err != nil {
		b.problem("report.md: %v", err)
		return
	}
	b.run.Report = t.s
	if t.cut > 0 {
		b.problem("report.md: only its last %d bytes are shown", maxReport)
	}
}

// labels are the node labels of graph.dot, the pipeline the run
// executed; a graph that is missing or does not load leaves the ids alone.
func (b *builder) labels() map[string]string {
	data, cut, err := tail(b.root, "graph.dot", maxGraph)
	if err != nil || cut > 0 {
		return nil
	}
	g, _, err := attractor.Load("graph.dot", data)
	if err != nil || g == nil {
		return nil
	}
	out := map[string]string{}
	for _, n := range g.Nodes {
		out[n.ID] = b.p.opts.Redactor.Redact(n.Label)
	}
	return out
}

func (b *builder) readDir(name string) ([]fs.DirEntry, error) {
	f, err := b.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// stageDirName is the engine's stage directory for a node id: one path
// element, with separators and NUL replaced.
func stageDirName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if c == '/' || c == '\\' || c == 0 {
			b[i] = '_'
		}
	}
	if s := string(b); s != "" && s != "." && s != ".." {
		return s
	}
	return "_" + string(b)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
