package runpage

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The live page. A run's page is whole without JavaScript (and then, while
// the run goes, reloads itself every refreshSeconds, from a <noscript>).
// With JavaScript, live.js instead opens the page's event stream (Stream,
// server-sent events) and keeps the page in place: a log that grows is
// replaced where it stands, and when the run or a node changes state the
// script fetches the page and swaps the parts that changed, keeping the
// reader's scroll position and the logs they opened. The stream reads
// the run directory as the page does (the streams of one run share their
// looks, sharedLoads), so it shows nothing the page would not: everything is redacted, and the token of the page's link is the
// token of its stream.

//go:embed live.js
var assets embed.FS

// LiveScript is live.js, to serve at LiveScriptPath.
func LiveScript() []byte {
	b, _ := assets.ReadFile("live.js") // embedded: always there
	return b
}

// LiveScriptPath is where the page loads live.js from.
const LiveScriptPath = "/assets/runpage-live.js"

// StreamPath is the event stream of run id's page, without its token.
func StreamPath(id string) string { return "/runs/" + id + "/live" }

// Stream timing.
const (
	// DefaultStreamEvery is how often Stream looks at the run directory.
	DefaultStreamEvery = time.Second
	// streamFor bounds one stream; the browser reconnects by itself
	// (after streamRetry), which also lets connections move between
	// replicas and servers stop.
	streamFor   = 5 * time.Minute
	streamRetry = 2 * time.Second
	keepalive   = 15 * time.Second
)

// liveLog is the data of a "log" event: one log's redacted text, which
// replaces what the page shows of it.
type liveLog struct {
	ID      string `json:"id"`
	Text    string `json:"text"`
	Omitted int64  `json:"omitted"`
}

// snapshot is what a stream compares between looks.
type snapshot struct {
	state string             // run status and every node's row
	logs  map[string]liveLog // by element id
}

func snapshotOf(run *Run) snapshot {
	s := snapshot{logs: map[string]liveLog{}}
	var st strings.Builder
	fmt.Fprintf(&st, "%s|%s|%s;", run.Status, run.Reason, run.Commit.SHA)
	for _, n := range run.Nodes {
		fmt.Fprintf(&st, "%s|%s|%d|%s|%d;", n.ID, n.Status, n.Attempts, n.Commit.SHA, len(n.Logs))
		for _, l := range n.Logs {
			id := LogID(n.Dir, l.Name)
			s.logs[id] = liveLog{ID: id, Text: l.Text, Omitted: l.Omitted}
		}
	}
	sum := sha256.Sum256([]byte(st.String()))
	s.state = hex.EncodeToString(sum[:12])
	return s
}

// StateKey names what the run's page shows of the run's and its nodes'
// state; the page's event stream compares it (Stream's since).
func (r *Run) StateKey() string { return snapshotOf(r).state }

// StreamSince is the state a stream request's page shows: the
// Last-Event-ID of a reconnecting browser, else the URL's s parameter.
func StreamSince(r *http.Request) string {
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		return id
	}
	return r.URL.Query().Get("s")
}

// LogID is the element id of a node's log on the page.
func LogID(dir, name string) string {
	b := []byte("log-" + dir + "-" + name)
	for i, c := range b {
		ok := c == '-' || c == '_' || c == '.' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

// Stream serves run id's event stream until the run ends, ctx ends or
// streamFor has passed: "log" events with a log's new text, "state" when
// the run or a node changed (the page should be fetched again), "end"
// when the run is over. since is the StateKey of the page the reader has
// (from the stream URL's s parameter): when the run has moved on since the
// page was made, the first look says so. The caller has checked the token
// (Open). every is how often the run directory is read
// (DefaultStreamEvery when 0).
func (p *Pages) Stream(ctx context.Context, w http.ResponseWriter, id, since string, every time.Duration) error {
	if every <= 0 {
		every = DefaultStreamEvery
	}
	run, err := p.Load(id)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	sw := &sse{w: w, rc: http.NewResponseController(w), every: every}
	if err := sw.send(fmt.Sprintf("retry: %d\n\n", streamRetry.Milliseconds())); err != nil {
		return nil // the reader went away
	}
	last := snapshot{state: since}
	deadline := time.Now().Add(streamFor)
	idle := time.Now()
	for {
		cur := snapshotOf(run)
		sent, err := sw.changes(last, cur)
		if err != nil {
			return nil
		}
		last = cur
		if !run.Live() {
			_ = sw.event("end", run.Status)
			return nil
		}
		if sent {
			idle = time.Now()
		} else if time.Since(idle) > keepalive {
			if sw.send(": keepalive\n\n") != nil {
				return nil
			}
			idle = time.Now()
		}
		if time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
		if run, err = p.loadShared(id, every); err != nil {
			return nil // removed by retention meanwhile: the stream just ends
		}
	}
}

// sse writes server-sent events, each flushed at once.
type sse struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	every time.Duration
}

// changes sends what differs between two snapshots: logs first, then the
// state. It reports whether it sent anything.
func (s *sse) changes(prev, cur snapshot) (bool, error) {
	sent := false
	for id, l := range cur.logs {
		if old, ok := prev.logs[id]; ok && old == l {
			continue
		}
		if prev.logs == nil && l.Text == "" {
			continue
		}
		b, err := json.Marshal(l)
		if err != nil {
			return sent, err
		}
		if err := s.event("log", string(b)); err != nil {
			return sent, err
		}
		sent = true
	}
	if prev.state != "" && prev.state != cur.state {
		// The id comes back as Last-Event-ID when the browser reconnects:
		// the state the page has been brought to.
		if err := s.send("id: " + cur.state + "\n" + "event: state\ndata: changed\n\n"); err != nil {
			return sent, err
		}
		sent = true
	}
	return sent, nil
}

// event writes one event; data has no newline (JSON or a word).
func (s *sse) event(name, data string) error {
	return s.send("event: " + name + "\ndata: " + data + "\n\n")
}

func (s *sse) send(frame string) error {
	// The server's write timeout is for pages; a stream extends it per write.
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.every + keepalive + 30*time.Second))
	if _, err := s.w.Write([]byte(frame)); err != nil {
		return err
	}
	return s.rc.Flush()
}
