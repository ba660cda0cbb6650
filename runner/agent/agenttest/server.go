package agenttest

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Protocols, as Request.Protocol names them.
const (
	Anthropic = "anthropic" // POST …/v1/messages
	Responses = "responses" // POST …/responses
	Chat      = "chat"      // POST …/chat/completions
	Gemini    = "gemini"    // POST …/models/M:generateContent or :streamGenerateContent
)

// Turn is one scripted answer, or a fault when Fault is set.
type Turn struct {
	Text  string
	Calls []Call
	Fault Fault
	// InputTokens and OutputTokens are the usage reported (100 and 10 when
	// zero); InputTokens are the uncached input tokens. CacheReadTokens and
	// CacheWriteTokens are input tokens read from and written to the
	// prompt cache. Each protocol reports them as its API does: Anthropic
	// each kind apart (cache writes only there); OpenAI and Gemini the
	// prompt with the cached tokens in it, and the cached ones again.
	InputTokens, OutputTokens         int64
	CacheReadTokens, CacheWriteTokens int64
}

// Call is a tool call the model makes.
type Call struct {
	Name string
	Args map[string]any
}

// Fault is a failure instead of an answer: an HTTP status with the
// protocol's error body, or Cut.
type Fault struct {
	Status  int
	Message string
	// Cut closes the connection after the headers and part of the body
	// (streaming) or before any answer (not streaming).
	Cut bool
	// Early, with Cut, closes a stream right after its headers, before any
	// event: no client can take it for a finished message.
	Early bool
}

// Common faults.
var (
	RateLimited = Fault{Status: 429, Message: "rate limited: slow down"}
	ServerError = Fault{Status: 500, Message: "internal server error"}
	Overloaded  = Fault{Status: 529, Message: "Overloaded"}
	BadKey      = Fault{Status: 401, Message: "invalid x-api-key"}
	BadRequest  = Fault{Status: 400, Message: "messages: field required"}
	CutStream   = Fault{Cut: true}
	CutAtStart  = Fault{Cut: true, Early: true}
)

// Text is a final answer.
func Text(s string) Turn { return Turn{Text: s} }

// Tool is a turn that calls one tool.
func Tool(name string, args map[string]any) Turn {
	return Turn{Calls: []Call{{Name: name, Args: args}}}
}

// Failing is a turn that fails with f.
func Failing(f Fault) Turn { return Turn{Fault: f} }

// Request is one request the server received.
type Request struct {
	Protocol string // "" for a side request (count tokens, models)
	Path     string
	Header   http.Header
	Body     map[string]any
	Stream   bool
	Turn     int // index of the turn it took; -1 for none
}

// Server is the fake model server.
type Server struct {
	URL string // http://ADDR:PORT (New: 127.0.0.1), no trailing slash
	// SideText answers calls that offer no tools; valid JSON for the
	// Gemini CLI's next-speaker check.
	SideText string

	srv    *httptest.Server
	mu     sync.Mutex
	turns  []Turn
	next   int
	reqs   []Request
	served Served
}

// Served sums the usage the server reported in complete answers, by kind
// as a bot counts it: input tokens without the cached ones, cache reads,
// cache writes (the Anthropic protocol's only), output.
type Served struct {
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int64
	Answers                                                      int
}

// Served is the usage of every complete answer since New or Reset, side
// answers (calls without tools) included.
func (s *Server) Served() Served {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

// serve counts an answer's usage.
func (s *Server) count(t Turn, protocol string) {
	in, out := usage(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.served.Answers++
	s.served.InputTokens += in
	s.served.OutputTokens += out
	s.served.CacheReadTokens += t.CacheReadTokens
	if protocol == Anthropic {
		s.served.CacheWriteTokens += t.CacheWriteTokens
	}
}

// New starts a server on 127.0.0.1 answering from turns (at least one)
// and closes it when the test ends.
func New(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("agenttest: listen: %v", err)
	}
	return Serve(t, ln, turns...)
}

// Serve is New on a listener of the test's own: one in a network
// namespace the test made (internal/testnet), which a jail of network
// public reaches as it would the internet. It closes ln when the test
// ends.
func Serve(t testing.TB, ln net.Listener, turns ...Turn) *Server {
	t.Helper()
	if len(turns) == 0 {
		ln.Close()
		t.Fatal("agenttest: no turns")
	}
	s := &Server{turns: turns, SideText: `{"reasoning":"the task is done","next_speaker":"user"}`}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Listener = ln
	s.srv.Start()
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Reset replaces the script with turns (at least one) and forgets the
// requests received, so that one server serves test cases in turn.
func (s *Server) Reset(turns ...Turn) {
	if len(turns) == 0 {
		panic("agenttest: Reset with no turns")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns, s.next, s.reqs, s.served = turns, 0, nil, Served{}
}

// Requests returns what the server has received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Calls counts the requests that took a turn.
func (s *Server) Calls() int {
	n := 0
	for _, r := range s.Requests() {
		if r.Turn >= 0 {
			n++
		}
	}
	return n
}

// take records r and returns the turn it gets, if it takes one.
func (s *Server) take(r Request, tools bool) (Turn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Turn = -1
	if !tools {
		s.reqs = append(s.reqs, r)
		return Turn{Text: s.SideText}, false
	}
	r.Turn = min(s.next, len(s.turns)-1)
	s.next++
	s.reqs = append(s.reqs, r)
	return s.turns[r.Turn], true
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.NewDecoder(bytes.NewReader(raw)).Decode(&body)
	req := Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet || strings.HasSuffix(p, "/count_tokens") || strings.HasSuffix(p, ":countTokens"):
		s.side(w, req)
	case strings.HasSuffix(p, "/messages"):
		req.Protocol, req.Stream = Anthropic, body["stream"] == true
		s.answer(w, req, hasList(body, "tools"), anthropicWire{})
	case strings.HasSuffix(p, "/responses"):
		req.Protocol, req.Stream = Responses, body["stream"] == true
		s.answer(w, req, hasList(body, "tools"), responsesWire{})
	case strings.HasSuffix(p, "/chat/completions"):
		req.Protocol, req.Stream = Chat, body["stream"] == true
		s.answer(w, req, hasList(body, "tools"), chatWire{})
	case strings.Contains(p, ":generateContent") || strings.Contains(p, ":streamGenerateContent"):
		req.Protocol, req.Stream = Gemini, strings.Contains(p, ":stream")
		s.answer(w, req, hasList(body, "tools"), geminiWire{model: geminiModel(p)})
	default:
		s.take(req, false)
		http.Error(w, `{"error":{"message":"agenttest: no such endpoint"}}`, http.StatusNotFound)
	}
}

// side answers token counting and model listing.
func (s *Server) side(w http.ResponseWriter, req Request) {
	s.take(req, false)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"input_tokens":100,"totalTokens":100,"object":"list","data":[],"models":[]}`)
}

// wire renders turns in one protocol.
type wire interface {
	// errorBody is the protocol's error document for f.
	errorBody(f Fault) any
	// requestIDHeader names the header in which the provider identifies
	// every answer, error or not (Anthropic's request-id), or "".
	requestIDHeader() string
	// body is a complete non-streaming answer.
	body(t Turn, id string) any
	// events are the streamed answer as SSE (event name, data) pairs.
	events(t Turn, id string) []sse
}

type sse struct {
	event string // "" writes no event: line
	data  any    // a string is written verbatim
}

func (s *Server) answer(w http.ResponseWriter, req Request, tools bool, wr wire) {
	t, took := s.take(req, tools)
	id := "t0"
	if took {
		id = "t" + itoa(s.Calls())
	}
	f := t.Fault
	if h := wr.requestIDHeader(); h != "" {
		w.Header().Set(h, "req_"+id+"_"+itoa(len(s.Requests())))
	}
	switch {
	case f.Status != 0:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		_ = json.NewEncoder(w).Encode(wr.errorBody(f))
		return
	case f.Cut && !req.Stream:
		panic(http.ErrAbortHandler) // the connection closes with no answer
	case !req.Stream:
		w.Header().Set("Content-Type", "application/json")
		s.count(t, req.Protocol)
		_ = json.NewEncoder(w).Encode(wr.body(t, id))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	evs := wr.events(t, id)
	if f.Cut {
		evs = evs[:min(2, len(evs))]
		if f.Early {
			evs = nil
		}
	}
	for _, e := range evs {
		writeSSE(w, e)
	}
	if f.Cut {
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // mid-stream: no terminating chunk
	}
	s.count(t, req.Protocol)
}

func writeSSE(w http.ResponseWriter, e sse) {
	var b strings.Builder
	if e.event != "" {
		b.WriteString("event: " + e.event + "\n")
	}
	data, ok := e.data.(string)
	if !ok {
		j, _ := json.Marshal(e.data)
		data = string(j)
	}
	b.WriteString("data: " + data + "\n\n")
	_, _ = io.WriteString(w, b.String())
	w.(http.Flusher).Flush()
}

func hasList(body map[string]any, key string) bool {
	l, ok := body[key].([]any)
	return ok && len(l) > 0
}

func usage(t Turn) (in, out int64) {
	in, out = t.InputTokens, t.OutputTokens
	if in == 0 {
		in = 100
	}
	if out == 0 {
		out = 10
	}
	return in, out
}

func argsJSON(c Call) string {
	if c.Args == nil {
		return "{}"
	}
	b, _ := json.Marshal(c.Args)
	return string(b)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
