package ghapptest

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// defaultBranch is every fake repository's default branch.
const defaultBranch = "main"

// repoState is a repository's records. The identity fields never change
// after AddRepo and may be read without Server.mu; the rest need it.
type repoState struct {
	id           int64
	owner, name  string
	dir          string // the bare repository
	installation int64
	created      time.Time

	perms     map[string]string // lower-case login → role
	pulls     map[int]*Pull
	comments  []Comment
	reactions []Reaction
	checks    []*CheckRun // creation order
}

func (rs *repoState) fullName() string { return rs.owner + "/" + rs.name }

func repoKey(owner, name string) string { return strings.ToLower(owner + "/" + name) }

// Repo is a fake repository: a real bare git repository the server serves.
type Repo struct {
	Owner, Name string
	ID          int64
	Dir         string // path of the bare repository
	s           *Server
	mu          sync.Mutex // one Commit at a time: they share the scratch index
	scratch     string
}

// FullName is "owner/name".
func (r *Repo) FullName() string { return r.Owner + "/" + r.Name }

// AddRepo creates an empty bare repository owner/name (default branch
// "main") and installs the App on owner if it is not yet.
func (s *Server) AddRepo(owner, name string) *Repo {
	s.t.Helper()
	if !validName(owner) || !validName(name) {
		s.t.Fatalf("ghapptest: AddRepo(%q, %q): invalid name", owner, name)
	}
	dir := filepath.Join(s.gitRoot, owner, name+".git")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		s.t.Fatalf("ghapptest: AddRepo: %v", err)
	}
	if _, err := s.git.run(s.t.Context(), s.gitRoot, nil, nil, "init", "--bare", "-q", "-b", defaultBranch, dir); err != nil {
		s.t.Fatalf("ghapptest: AddRepo %s/%s: %v", owner, name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.st.repos[repoKey(owner, name)]; ok {
		s.t.Fatalf("ghapptest: AddRepo: %s/%s already exists", owner, name)
	}
	rs := &repoState{
		id: s.nextIDLocked(), owner: owner, name: name, dir: dir,
		installation: s.installationLocked(owner).id, created: time.Now().UTC(),
		perms: map[string]string{}, pulls: map[int]*Pull{},
	}
	s.st.repos[repoKey(owner, name)] = rs
	return &Repo{Owner: owner, Name: name, ID: rs.id, Dir: dir, s: s, scratch: s.t.TempDir()}
}

// validName keeps names to what GitHub allows and out of path tricks.
func validName(n string) bool {
	if n == "" || n == "." || n == ".." || strings.HasPrefix(n, "-") {
		return false
	}
	return strings.IndexFunc(n, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0
}

// Git runs git in the bare repository and returns its trimmed output, for
// tests that inspect what the bot pushed (git log, ls-tree, show).
func (r *Repo) Git(t testing.TB, args ...string) string {
	t.Helper()
	out, err := r.s.git.run(t.Context(), r.Dir, nil, nil, args...)
	if err != nil {
		t.Fatalf("ghapptest: %s: %v", r.FullName(), err)
	}
	return strings.TrimSpace(out)
}

// Ref is the commit a ref (branch name or full ref) points at, or "" when
// there is none.
func (r *Repo) Ref(t testing.TB, ref string) string {
	t.Helper()
	sha, err := resolveCommit(t.Context(), r.s.git, r.Dir, ref)
	if err != nil {
		t.Fatalf("ghapptest: %s: %v", r.FullName(), err)
	}
	return sha
}

// resolveCommit returns the commit a ref (SHA, branch, tag or full ref)
// names, or "" when it names none.
func resolveCommit(ctx context.Context, g gitEnv, dir, ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return "", nil
	}
	out, err := g.run(ctx, dir, nil, nil, "rev-parse", "--verify", "-q", ref+"^{commit}")
	if err != nil {
		if quiet(err) { // an unknown ref, not a broken repository
			return "", nil
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// authorize checks the request's installation token for owner/repo and a
// permission (any of names at level), in GitHub's order: 401 for the token,
// 404 for a repository it cannot see, 403 for a missing permission.
func (s *Server) authorize(r *http.Request, level string, names ...string) (*repoState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authorizeLocked(r, level, names...)
}

func (s *Server) authorizeLocked(r *http.Request, level string, names ...string) (*repoState, error) {
	ts, err := s.tokenFromRequestLocked(r)
	if err != nil {
		return nil, err
	}
	rs := s.st.repos[repoKey(r.PathValue("owner"), r.PathValue("repo"))]
	if rs == nil || !ts.covers(rs) {
		return nil, errNotFound()
	}
	if !ts.allows(level, names...) {
		return nil, errNotAccessible()
	}
	return rs, nil
}

func (ts *tokenState) covers(rs *repoState) bool {
	return rs.installation == ts.installation && (ts.repos == nil || ts.repos[rs.id])
}

// mustRepoLocked returns a repository the test set up, failing the test
// when there is none.
func (s *Server) mustRepoLocked(owner, name string) *repoState {
	rs, ok := s.st.repos[repoKey(owner, name)]
	if !ok {
		s.t.Fatalf("ghapptest: no repository %s/%s: call AddRepo first", owner, name)
	}
	return rs
}

func (s *Server) repoByNameLocked(inst int64, name string) *repoState {
	for _, rs := range s.st.repos {
		if rs.installation == inst && strings.EqualFold(rs.name, name) {
			return rs
		}
	}
	return nil
}

func (s *Server) repoByIDLocked(id int64) *repoState {
	for _, rs := range s.st.repos {
		if rs.id == id {
			return rs
		}
	}
	return nil
}

func (s *Server) sortedReposLocked() []*repoState {
	var out []*repoState
	for _, rs := range s.st.repos {
		out = append(out, rs)
	}
	slices.SortFunc(out, func(a, b *repoState) int { return int(a.id - b.id) })
	return out
}

// getRepo serves GET /repos/{owner}/{repo}.
func (s *Server) getRepo(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.authorize(r, "read", "metadata")
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.repoJSON(rs))
}

func (s *Server) repoJSON(rs *repoState) map[string]any {
	return s.repoJSONNamed(rs.id, rs.owner, rs.name, false)
}

func (s *Server) repoJSONNamed(id int64, owner, name string, fork bool) map[string]any {
	full := owner + "/" + name
	return map[string]any{
		"id":             id,
		"node_id":        fmt.Sprintf("R_%d", id),
		"name":           name,
		"full_name":      full,
		"private":        true,
		"fork":           fork,
		"owner":          userJSON(owner, "Organization"),
		"html_url":       s.URL() + "/" + full,
		"url":            s.APIURL() + "repos/" + full,
		"clone_url":      s.CloneURL(owner, name),
		"default_branch": defaultBranch,
	}
}

// userID gives every login a stable id.
func userID(login string) int64 {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(login)))
	return int64(h.Sum32()%90_000_000) + 10_000_000
}

func userJSON(login, typ string) map[string]any {
	return map[string]any{
		"login":      login,
		"id":         userID(login),
		"node_id":    fmt.Sprintf("U_%d", userID(login)),
		"type":       typ,
		"site_admin": false,
	}
}
