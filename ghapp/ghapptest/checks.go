package ghapptest

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CheckRuns returns copies of owner/repo's check runs in creation order.
func (s *Server) CheckRuns(owner, repo string) []*CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.mustRepoLocked(owner, repo)
	out := make([]*CheckRun, len(rs.checks))
	for i, cr := range rs.checks {
		out[i] = cr.clone()
	}
	return out
}

// createCheckRun serves POST /repos/{owner}/{repo}/check-runs.
func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.authorize(r, "write", "checks")
	if err != nil {
		return err
	}
	body, b, err := s.checkRunRequest(r, s.schemas.create, createSchemaFile)
	if err != nil {
		return err
	}
	// GitHub refuses a check run on a commit it does not have.
	sha, err := resolveCommit(r.Context(), s.git, rs.dir, b.HeadSHA)
	if err != nil {
		return err
	}
	if sha != b.HeadSHA {
		return errInvalid("No commit found for SHA: " + b.HeadSHA)
	}
	at := time.Now()
	now := at.UTC().Truncate(time.Second)
	s.mu.Lock()
	defer s.mu.Unlock()
	cr := &CheckRun{ID: s.nextIDLocked(), HeadSHA: sha, Status: "queued", StartedAt: now}
	cr.apply(b, now)
	cr.Requests = append(cr.Requests, request(r.Method, body, b, at))
	rs.checks = append(rs.checks, cr)
	return writeJSON(w, http.StatusCreated, s.checkRunJSONLocked(rs, cr))
}

// updateCheckRun serves PATCH /repos/{owner}/{repo}/check-runs/{id}.
func (s *Server) updateCheckRun(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.authorize(r, "write", "checks")
	if err != nil {
		return err
	}
	at := time.Now()
	body, b, err := s.checkRunRequest(r, s.schemas.update, updateSchemaFile)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cr := findCheckRun(rs, r.PathValue("id"))
	if cr == nil {
		return errNotFound()
	}
	cr.apply(b, at.UTC().Truncate(time.Second))
	cr.Requests = append(cr.Requests, request(r.Method, body, b, at))
	return writeJSON(w, http.StatusOK, s.checkRunJSONLocked(rs, cr))
}

// checkRunRequest reads and validates a check-run body. A body GitHub
// would reject is answered 422 and fails the test: the bot must not send it.
func (s *Server) checkRunRequest(r *http.Request, sch *jsonschema.Schema, file string) ([]byte, *checkRunBody, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, nil, errBadJSON()
	}
	if err := validate(sch, file, body); err != nil {
		s.t.Errorf("ghapptest: %s %s: GitHub would reject this check-run body: %v", r.Method, r.URL.Path, err)
		return nil, nil, errInvalid("Invalid request.\n\n" + err.Error())
	}
	b, err := decodeCheckRunBody(body)
	if err != nil {
		return nil, nil, err // valid per schema yet undecodable: a fake bug
	}
	return body, b, nil
}

func findCheckRun(rs *repoState, id string) *CheckRun {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil
	}
	i := slices.IndexFunc(rs.checks, func(cr *CheckRun) bool { return cr.ID == n })
	if i < 0 {
		return nil
	}
	return rs.checks[i]
}

// getCheckRun serves GET /repos/{owner}/{repo}/check-runs/{id}.
func (s *Server) getCheckRun(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.authorizeLocked(r, "read", "checks")
	if err != nil {
		return err
	}
	cr := findCheckRun(rs, r.PathValue("id"))
	if cr == nil {
		return errNotFound()
	}
	return writeJSON(w, http.StatusOK, s.checkRunJSONLocked(rs, cr))
}

// listAnnotations serves GET /repos/{owner}/{repo}/check-runs/{id}/annotations.
func (s *Server) listAnnotations(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.authorizeLocked(r, "read", "checks")
	if err != nil {
		return err
	}
	cr := findCheckRun(rs, r.PathValue("id"))
	if cr == nil {
		return errNotFound()
	}
	return writeJSON(w, http.StatusOK, paginate(w, r, s.URL(), cr.Annotations))
}

// listCheckRunsForRef serves GET /repos/{owner}/{repo}/commits/{ref}/check-runs
// with the check_name, status and filter (latest, all) parameters.
func (s *Server) listCheckRunsForRef(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.authorize(r, "read", "checks")
	if err != nil {
		return err
	}
	ref := r.PathValue("ref")
	sha, err := resolveCommit(r.Context(), s.git, rs.dir, ref)
	if err != nil {
		return err
	}
	if sha == "" {
		return errInvalid("No commit found for SHA: " + ref)
	}
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	runs := filterCheckRuns(rs.checks, sha, q.Get("check_name"), q.Get("status"), q.Get("filter") != "all")
	page := paginate(w, r, s.URL(), runs)
	out := make([]map[string]any, len(page))
	for i, cr := range page {
		out[i] = s.checkRunJSONLocked(rs, cr)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": out})
}

// filterCheckRuns picks the runs on sha, newest first; latest keeps only the
// newest run of each name, as GitHub's default filter does.
func filterCheckRuns(all []*CheckRun, sha, name, status string, latest bool) []*CheckRun {
	var out []*CheckRun
	seen := map[string]bool{}
	for _, cr := range slices.Backward(all) {
		if cr.HeadSHA != sha || (name != "" && cr.Name != name) || (status != "" && cr.Status != status) {
			continue
		}
		if latest && seen[strings.ToLower(cr.Name)] {
			continue
		}
		seen[strings.ToLower(cr.Name)] = true
		out = append(out, cr)
	}
	return out
}
