package ghapptest

import (
	"cmp"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Pull is a pull request the test sets up.
type Pull struct {
	Number   int
	Title    string
	Author   string // login; default "octocat"
	HeadSHA  string
	HeadRef  string // default "feature-<number>"
	HeadRepo string // full name; another repository for a fork
	BaseRef  string
	Draft    bool
	State    string   // default "open"
	Files    []string // changed paths, as GET .../pulls/{n}/files lists them
}

// AddPull adds (or replaces) pull request number on owner/repo with the
// defaults of Pull. See PutPull.
func (s *Server) AddPull(owner, repo string, number int, headSHA, baseRef, headRepoFullName string, changedFiles []string) {
	s.t.Helper()
	s.PutPull(owner, repo, Pull{Number: number, HeadSHA: headSHA, BaseRef: baseRef,
		HeadRepo: headRepoFullName, Files: changedFiles})
}

// PutPull adds or replaces a pull request; replacing one with a new HeadSHA
// is how a test pushes to a pull request. Like GitHub it points
// refs/pull/<n>/head of the base repository at the head commit, copying the
// commit from the head repository when that is a fake repository (a fork).
func (s *Server) PutPull(owner, repo string, p Pull) {
	s.t.Helper()
	p = withPullDefaults(p, owner, repo)
	s.mu.Lock()
	rs := s.mustRepoLocked(owner, repo)
	head := s.st.repos[repoKey(splitFullName(p.HeadRepo))]
	s.mu.Unlock()
	if err := s.linkPullHead(rs, head, p); err != nil {
		s.t.Fatalf("ghapptest: PutPull %s#%d: %v", rs.fullName(), p.Number, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rs.pulls[p.Number] = &p
}

func withPullDefaults(p Pull, owner, repo string) Pull {
	p.Files = slices.Clone(p.Files)
	p.Title = cmp.Or(p.Title, fmt.Sprintf("Pull request %d", p.Number))
	p.Author = cmp.Or(p.Author, "octocat")
	p.HeadRef = cmp.Or(p.HeadRef, fmt.Sprintf("feature-%d", p.Number))
	p.HeadRepo = cmp.Or(p.HeadRepo, owner+"/"+repo)
	p.BaseRef = cmp.Or(p.BaseRef, defaultBranch)
	p.State = cmp.Or(p.State, "open")
	return p
}

// linkPullHead points refs/pull/<n>/head at the head commit when it can be
// found, in the base repository or the fake head repository.
func (s *Server) linkPullHead(base, head *repoState, p Pull) error {
	ctx := s.t.Context()
	ref := fmt.Sprintf("refs/pull/%d/head", p.Number)
	if sha, err := resolveCommit(ctx, s.git, base.dir, p.HeadSHA); err != nil || sha != "" {
		if err != nil {
			return err
		}
		_, err = s.git.run(ctx, base.dir, nil, nil, "update-ref", ref, sha)
		return err
	}
	if head == nil || head == base {
		return nil // the test chose a head the fake has no objects for
	}
	if sha, err := resolveCommit(ctx, s.git, head.dir, p.HeadSHA); err != nil || sha == "" {
		return err
	}
	_, err := s.git.run(ctx, head.dir, nil, nil, "push", "-q", "--force", base.dir, p.HeadSHA+":"+ref)
	return err
}

func splitFullName(full string) (string, string) {
	owner, name, _ := strings.Cut(full, "/")
	return owner, name
}

func sortedPulls(rs *repoState) []*Pull {
	out := make([]*Pull, 0, len(rs.pulls))
	for _, p := range rs.pulls {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Pull) int { return a.Number - b.Number })
	return out
}

func findPull(rs *repoState, number string) *Pull {
	n, err := strconv.Atoi(number)
	if err != nil {
		return nil
	}
	return rs.pulls[n]
}

// getPull serves GET /repos/{owner}/{repo}/pulls/{number}.
func (s *Server) getPull(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.authorize(r, "read", "pull_requests")
	if err != nil {
		return err
	}
	s.mu.Lock()
	p := findPull(rs, r.PathValue("number"))
	s.mu.Unlock()
	if p == nil {
		return errNotFound()
	}
	baseSHA, err := resolveCommit(r.Context(), s.git, rs.dir, "refs/heads/"+p.BaseRef)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.pullJSON(rs, p, baseSHA))
}

func (s *Server) pullJSON(rs *repoState, p *Pull, baseSHA string) map[string]any {
	headOwner, headName := splitFullName(p.HeadRepo)
	fork := !strings.EqualFold(p.HeadRepo, rs.fullName())
	headID := rs.id
	if fork {
		headID = userID(p.HeadRepo) // a stable id for a repository the fake may not hold
	}
	return map[string]any{
		"id":            rs.id*100000 + int64(p.Number),
		"node_id":       fmt.Sprintf("PR_%d_%d", rs.id, p.Number),
		"number":        p.Number,
		"state":         p.State,
		"locked":        false,
		"title":         p.Title,
		"body":          nil,
		"draft":         p.Draft,
		"merged":        false,
		"user":          userJSON(p.Author, "User"),
		"url":           fmt.Sprintf("%srepos/%s/pulls/%d", s.APIURL(), rs.fullName(), p.Number),
		"html_url":      fmt.Sprintf("%s/%s/pull/%d", s.URL(), rs.fullName(), p.Number),
		"changed_files": len(p.Files),
		"head": map[string]any{
			"label": headOwner + ":" + p.HeadRef, "ref": p.HeadRef, "sha": p.HeadSHA,
			"user": userJSON(headOwner, "User"), "repo": s.repoJSONNamed(headID, headOwner, headName, fork),
		},
		"base": map[string]any{
			"label": rs.owner + ":" + p.BaseRef, "ref": p.BaseRef, "sha": baseSHA,
			"user": userJSON(rs.owner, "Organization"), "repo": s.repoJSON(rs),
		},
	}
}

// listPullFiles serves GET /repos/{owner}/{repo}/pulls/{number}/files,
// paginated like GitHub.
func (s *Server) listPullFiles(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.authorizeLocked(r, "read", "pull_requests")
	if err != nil {
		return err
	}
	p := findPull(rs, r.PathValue("number"))
	if p == nil {
		return errNotFound()
	}
	files := make([]map[string]any, len(p.Files))
	for i, f := range p.Files {
		files[i] = s.pullFileJSON(rs, p, f)
	}
	return writeJSON(w, http.StatusOK, paginate(w, r, s.URL(), files))
}

func (s *Server) pullFileJSON(rs *repoState, p *Pull, path string) map[string]any {
	sum := sha1.Sum([]byte(p.HeadSHA + ":" + path)) // stands in for the blob id
	return map[string]any{
		"sha":          hex.EncodeToString(sum[:]),
		"filename":     path,
		"status":       "modified",
		"additions":    1,
		"deletions":    0,
		"changes":      1,
		"blob_url":     fmt.Sprintf("%s/%s/blob/%s/%s", s.URL(), rs.fullName(), p.HeadSHA, path),
		"raw_url":      fmt.Sprintf("%s/%s/raw/%s/%s", s.URL(), rs.fullName(), p.HeadSHA, path),
		"contents_url": fmt.Sprintf("%srepos/%s/contents/%s?ref=%s", s.APIURL(), rs.fullName(), path, p.HeadSHA),
	}
}

// listPullsForCommit serves GET /repos/{owner}/{repo}/commits/{sha}/pulls:
// the pull requests whose head is sha.
func (s *Server) listPullsForCommit(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.authorize(r, "read", "pull_requests", "contents")
	if err != nil {
		return err
	}
	s.mu.Lock()
	var pulls []*Pull
	for _, p := range sortedPulls(rs) {
		if p.HeadSHA == r.PathValue("sha") {
			pulls = append(pulls, p)
		}
	}
	s.mu.Unlock()
	out := []map[string]any{}
	for _, p := range pulls {
		baseSHA, err := resolveCommit(r.Context(), s.git, rs.dir, "refs/heads/"+p.BaseRef)
		if err != nil {
			return err
		}
		out = append(out, s.pullJSON(rs, p, baseSHA))
	}
	return writeJSON(w, http.StatusOK, out)
}
