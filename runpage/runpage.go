// Package runpage renders one run directory as the human page served at
// GET /runs/{id}, the details_url of every check run the bot posts.
//
// The model. A run directory (see package runner) is the record of a run:
// checkpoint.json (state after the last checkpoint), progress.ndjson (one
// event per line, appended while the run goes on), report.md (the summary
// the check shows), and nodes/<stage>/ with each node's status.json and
// logs. Load reads what is there at the moment of the request into a Run,
// tolerating a run that has not checkpointed yet or files that are cut
// short; Render turns a Run into server-side HTML with html/template, which
// escapes every value. The report is the summary check's Markdown, turned
// into HTML by Markdown, a renderer of exactly the subset package checks
// writes. The page needs no JavaScript: while the run goes, a meta refresh
// in <noscript> reloads it; with JavaScript, live.js follows the run's
// event stream instead and never reloads the page (live.go).
//
// Access. The page of a run opens only with the token of its link (see
// Keys): Open checks it before the run id is even looked at, and answers
// a missing or wrong token with ErrNoAccess, whether the run exists or
// not. Load reads without asking and is for callers that have checked.
//
// Safety. The run id is checked against the ULID alphabet before it names
// a directory, and every file is opened through an os.Root at the run
// directory, so neither a crafted id nor a symbolic link a pipeline left in
// its stage directory reads anything outside the run. Logs, reasons and the
// report are passed through a checks.Redactor before they are shown: nodes
// run arbitrary commands and may print tokens. Files are read from their
// end with a cap, so a huge log costs a bounded read.
package runpage

import (
	"errors"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/checks"
)

// Errors Open and Load return; the HTTP layer maps them to 400 and 404
// (ErrNoAccess too, so that a page without its token looks like no page).
var (
	ErrInvalidID = errors.New("runpage: invalid run id")
	ErrNotFound  = errors.New("runpage: no such run")
	ErrNoAccess  = errors.New("runpage: missing or wrong page token")
)

// ContentSecurityPolicy is the policy to serve pages with: inline styles,
// and no script but live.js from the server itself, which reads the
// page's event stream and the page.
const ContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; script-src 'self'; connect-src 'self'"

// DefaultLogTail is how much of the end of each log the page shows.
const DefaultLogTail = 16 << 10

// Options configure New.
type Options struct {
	// RunsDir holds one directory per run, named by its id: the data
	// dir's runs/ directory.
	RunsDir string
	// Keys check the token of each request (required).
	Keys *Keys
	// CommitURL links a checkpoint commit of a run, such as the
	// repository's web URL + "/commit/" + sha. Nil, or "" for a commit,
	// shows the SHA without a link.
	CommitURL func(runID, sha string) string
	// Source names the repository, pull request and commit a run tested,
	// for the links at the top of its page; nil, or a zero Source, shows
	// none.
	Source func(runID string) Source
	// Active reports whether a run is being worked on or waits to be:
	// running in a live process or queued. A run whose files say it is
	// still going but that is not active was interrupted (its process
	// died), and its page says so instead of "running" forever. Nil, or
	// true when the answer is unknown, takes the files at their word.
	Active func(runID string) bool
	// Now is the clock for the time a running run has taken so far
	// (default time.Now).
	Now func() time.Time
	// Redactor cleans every text taken from the run; nil still redacts
	// token shapes.
	Redactor *checks.Redactor
	// LogTail caps each log shown, in bytes (default DefaultLogTail).
	LogTail int
}

// Source is what a run tested, with links to it on GitHub; any field may
// be empty.
type Source struct {
	Repo, RepoURL string // owner/name and its web page
	PR            int
	PRURL         string
	HeadSHA       string
	HeadURL       string // the commit's web page
}

// Pages loads and renders run pages. It is safe for concurrent use.
type Pages struct {
	opts   Options
	tmpl   *template.Template
	shared sharedLoads // the live streams' looks at their runs
}

// New checks opts and parses the page template.
func New(opts Options) (*Pages, error) {
	if opts.RunsDir == "" {
		return nil, errors.New("runpage: no runs directory")
	}
	if opts.Keys == nil {
		return nil, errors.New("runpage: no keys for page tokens")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.LogTail <= 0 {
		opts.LogTail = DefaultLogTail
	}
	opts.RunsDir = filepath.Clean(opts.RunsDir)
	t, err := template.New("page").Funcs(funcs).Funcs(usageFuncs).Parse(pageTemplate + usageTemplate)
	if err != nil {
		return nil, fmt.Errorf("runpage: parse template: %w", err)
	}
	return &Pages{opts: opts, tmpl: t}, nil
}

// Open is Load for a request: it loads run id only when token is the
// token of its page, and fails with ErrNoAccess, before anything else,
// when it is not.
func (p *Pages) Open(id, token string) (*Run, error) {
	if !p.opts.Keys.Valid(id, token) {
		return nil, ErrNoAccess
	}
	return p.Load(id)
}

// Render writes run's page to w. Render into a buffer when an error must
// still be answerable with a status code.
func (p *Pages) Render(w io.Writer, run *Run) error {
	if err := p.tmpl.Execute(w, run); err != nil {
		return fmt.Errorf("runpage: render run %s: %w", run.ID, err)
	}
	return nil
}

// ValidID reports whether id looks like a run id: a ULID, 26 characters of
// Crockford's base32 in upper case. Nothing else may name a directory.
func ValidID(id string) bool {
	if len(id) != 26 || id[0] > '7' { // a ULID's 128 bits start with at most 7
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U':
		default:
			return false
		}
	}
	return true
}
