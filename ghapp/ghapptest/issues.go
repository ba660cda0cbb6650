package ghapptest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Comment is an issue comment: set up by the test (the one a webhook says
// was made) or posted by the bot.
type Comment struct {
	ID      int64
	Issue   int
	User    string
	Body    string
	ByBot   bool // posted through the API by the App
	Created time.Time
}

// Reaction is a reaction the bot added to a comment.
type Reaction struct {
	ID        int64
	CommentID int64
	Content   string
	User      string
}

// reactions GitHub accepts.
var reactionContents = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

// AddComment records a comment on owner/repo, as if user had made it, and
// returns it with its id (assigned unless c.ID is set, so a test can match
// the id in a webhook payload). The bot can then react to it.
func (s *Server) AddComment(owner, repo string, c Comment) Comment {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.mustRepoLocked(owner, repo)
	if c.ID == 0 {
		c.ID = s.nextIDLocked()
	}
	if c.Created.IsZero() {
		c.Created = time.Now().UTC()
	}
	rs.comments = append(rs.comments, c)
	return c
}

// Comments lists owner/repo's comments in the order they were made.
func (s *Server) Comments(owner, repo string) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.mustRepoLocked(owner, repo).comments)
}

// Reactions lists the reactions added on owner/repo's comments.
func (s *Server) Reactions(owner, repo string) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.mustRepoLocked(owner, repo).reactions)
}

// createComment serves POST /repos/{owner}/{repo}/issues/{number}/comments.
// Only pull requests exist in the fake, so the number must be one.
func (s *Server) createComment(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.authorizeLocked(r, "write", "issues", "pull_requests")
	if err != nil {
		return err
	}
	p := findPull(rs, r.PathValue("number"))
	if p == nil {
		return errNotFound()
	}
	var req struct {
		Body *string `json:"body"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Body == nil || *req.Body == "" {
		return errInvalid("Invalid request.\n\n\"body\" wasn't supplied.")
	}
	c := Comment{ID: s.nextIDLocked(), Issue: p.Number, User: s.botLogin(), Body: *req.Body,
		ByBot: true, Created: time.Now().UTC().Truncate(time.Second)}
	rs.comments = append(rs.comments, c)
	return writeJSON(w, http.StatusCreated, s.commentJSON(rs, c))
}

func (s *Server) botLogin() string { return s.cfg.appSlug + "[bot]" }

func (s *Server) commentJSON(rs *repoState, c Comment) map[string]any {
	typ := "User"
	if c.ByBot {
		typ = "Bot"
	}
	issue := fmt.Sprintf("%srepos/%s/issues/%d", s.APIURL(), rs.fullName(), c.Issue)
	return map[string]any{
		"id":                 c.ID,
		"node_id":            fmt.Sprintf("IC_%d", c.ID),
		"url":                fmt.Sprintf("%srepos/%s/issues/comments/%d", s.APIURL(), rs.fullName(), c.ID),
		"html_url":           fmt.Sprintf("%s/%s/pull/%d#issuecomment-%d", s.URL(), rs.fullName(), c.Issue, c.ID),
		"issue_url":          issue,
		"body":               c.Body,
		"user":               userJSON(c.User, typ),
		"created_at":         c.Created.Format(time.RFC3339),
		"updated_at":         c.Created.Format(time.RFC3339),
		"author_association": "NONE",
	}
}

// createReaction serves POST /repos/{owner}/{repo}/issues/comments/{id}/reactions.
// A second identical reaction answers 200 with the first, as on GitHub.
func (s *Server) createReaction(w http.ResponseWriter, r *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs, err := s.authorizeLocked(r, "write", "issues", "pull_requests")
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || !slices.ContainsFunc(rs.comments, func(c Comment) bool { return c.ID == id }) {
		return errNotFound()
	}
	var req struct {
		Content string `json:"content"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if !slices.Contains(reactionContents, req.Content) {
		return errInvalid(fmt.Sprintf("Invalid request.\n\n%q is not a member of %q.", req.Content, reactionContents))
	}
	for _, re := range rs.reactions {
		if re.CommentID == id && re.Content == req.Content && re.User == s.botLogin() {
			return writeJSON(w, http.StatusOK, reactionJSON(re))
		}
	}
	re := Reaction{ID: s.nextIDLocked(), CommentID: id, Content: req.Content, User: s.botLogin()}
	rs.reactions = append(rs.reactions, re)
	return writeJSON(w, http.StatusCreated, reactionJSON(re))
}

func reactionJSON(re Reaction) map[string]any {
	return map[string]any{
		"id":      re.ID,
		"node_id": fmt.Sprintf("REA_%d", re.ID),
		"content": re.Content,
		"user":    userJSON(re.User, "Bot"),
	}
}
