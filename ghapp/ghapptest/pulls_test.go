package ghapptest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v92/github"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

func TestPullFilesPagination(t *testing.T) {
	s, _, sha, tok := setup(t)
	var want []string
	for i := range 5 {
		want = append(want, fmt.Sprintf("pkg/f%d.go", i))
	}
	s.AddPull("acme", "widgets", 7, sha, "main", "acme/widgets", want)
	c := client(t, s, tok)
	opts := &github.ListOptions{PerPage: 2}
	var got []string
	var pages int
	for {
		files, resp, err := c.PullRequests.ListFiles(t.Context(), "acme", "widgets", 7, opts)
		if err != nil {
			t.Fatalf("ListFiles page %d: %v", opts.Page, err)
		}
		pages++
		if pages == 1 && resp.LastPage != 3 {
			t.Errorf("first page says last page %d, want 3 (Link %q)", resp.LastPage, resp.Header.Get("Link"))
		}
		for _, f := range files {
			got = append(got, f.GetFilename())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if diff := cmp.Diff(got, want); diff != "" || pages != 3 {
		t.Errorf("%d pages, files (-got +want):\n%s", pages, diff)
	}
	_, resp, err := c.PullRequests.ListFiles(t.Context(), "acme", "widgets", 7, nil)
	if err != nil || resp.Header.Get("Link") != "" {
		t.Errorf("one page: Link %q, err %v; want no Link", resp.Header.Get("Link"), err)
	}
}

func TestPullsAndForks(t *testing.T) {
	s, repo, base, tok := setup(t)
	head := repo.Commit(t, "feature", map[string]string{"main.go": "package main // changed\n"}, "change")
	fork := s.AddRepo("mallory", "widgets")
	forkHead := fork.Commit(t, "main", map[string]string{".kilroy/ci.dot": "digraph x {}"}, "fork change")
	s.AddPull("acme", "widgets", 1, head, "main", "acme/widgets", []string{"main.go"})
	s.PutPull("acme", "widgets", ghapptest.Pull{Number: 2, HeadSHA: forkHead, HeadRepo: "mallory/widgets",
		Author: "mallory", Files: []string{".kilroy/ci.dot"}})
	c := client(t, s, tok)

	pr, _, err := c.PullRequests.Get(t.Context(), "acme", "widgets", 1)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if pr.GetHead().GetSHA() != head || pr.GetBase().GetSHA() != base || pr.GetBase().GetRef() != "main" || pr.GetHead().GetRepo().GetFork() {
		t.Errorf("PR 1: head %s base %s@%s fork %v; want %s, main@%s, no fork",
			pr.GetHead().GetSHA(), pr.GetBase().GetRef(), pr.GetBase().GetSHA(), pr.GetHead().GetRepo().GetFork(), head, base)
	}
	pr, _, err = c.PullRequests.Get(t.Context(), "acme", "widgets", 2)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !pr.GetHead().GetRepo().GetFork() || pr.GetHead().GetRepo().GetFullName() != "mallory/widgets" || pr.GetUser().GetLogin() != "mallory" {
		t.Errorf("PR 2 head repo %q fork %v user %q; want mallory/widgets, fork, mallory",
			pr.GetHead().GetRepo().GetFullName(), pr.GetHead().GetRepo().GetFork(), pr.GetUser().GetLogin())
	}
	// As on GitHub, the base repository carries the fork's head.
	if got := repo.Ref(t, "refs/pull/2/head"); got != forkHead {
		t.Errorf("refs/pull/2/head = %q, want %s", got, forkHead)
	}
	if _, _, err := c.PullRequests.Get(t.Context(), "acme", "widgets", 3); statusOf(err) != http.StatusNotFound {
		t.Errorf("unknown PR: err %v, want 404", err)
	}

	// Check runs list same-repository pull requests only.
	for _, sha := range []string{head, forkHead} {
		cr, _, err := c.Checks.CreateCheckRun(t.Context(), "acme", "widgets", github.CreateCheckRunOptions{Name: "n", HeadSHA: sha})
		if err != nil {
			t.Fatalf("CreateCheckRun on %s: %v", sha, err)
		}
		want := 0
		if sha == head {
			want = 1
		}
		if len(cr.PullRequests) != want {
			t.Errorf("check run on %s lists %d pull requests, want %d", sha, len(cr.PullRequests), want)
		}
	}
	prs, _, err := c.PullRequests.ListPullRequestsWithCommit(t.Context(), "acme", "widgets", head, nil)
	if err != nil || len(prs) != 1 || prs[0].GetNumber() != 1 {
		t.Errorf("ListPullRequestsWithCommit = %d PRs, %v; want #1", len(prs), err)
	}
}

func TestContents(t *testing.T) {
	s, repo, _, tok := setup(t)
	repo.Commit(t, "feature", map[string]string{".kilroy/ci.dot": "digraph ci {}\n", ".kilroy/config.yml": "version: 1\n"}, "pipelines")
	c := client(t, s, tok)
	file, _, _, err := c.Repositories.GetContents(t.Context(), "acme", "widgets", ".kilroy/ci.dot",
		&github.RepositoryContentGetOptions{Ref: "feature"})
	if err != nil {
		t.Fatalf("GetContents: %v", err)
	}
	if got, err := file.GetContent(); err != nil || got != "digraph ci {}\n" {
		t.Errorf("content = %q, %v", got, err)
	}
	_, dir, _, err := c.Repositories.GetContents(t.Context(), "acme", "widgets", ".kilroy",
		&github.RepositoryContentGetOptions{Ref: "feature"})
	var names []string
	for _, e := range dir {
		names = append(names, e.GetPath()+":"+e.GetType())
	}
	if diff := cmp.Diff(names, []string{".kilroy/ci.dot:file", ".kilroy/config.yml:file"}); err != nil || diff != "" {
		t.Errorf("directory listing (-got +want), err %v:\n%s", err, diff)
	}
	for _, tc := range []struct{ path, ref string }{{".kilroy/ci.dot", "main"}, {"missing", ""}, {"README.md", "nope"}} {
		_, _, _, err := c.Repositories.GetContents(t.Context(), "acme", "widgets", tc.path,
			&github.RepositoryContentGetOptions{Ref: tc.ref})
		if statusOf(err) != http.StatusNotFound {
			t.Errorf("GetContents(%q, ref %q): err %v, want 404", tc.path, tc.ref, err)
		}
	}
}

func TestCollaboratorPermission(t *testing.T) {
	s, _, _, tok := setup(t)
	s.SetPermission("acme", "widgets", "maintainer", "maintain")
	s.SetPermission("acme", "widgets", "triager", "triage")
	s.SetPermission("acme", "widgets", "Owner", "admin")
	c := client(t, s, tok)
	for _, tc := range []struct{ user, perm, role string }{
		{"maintainer", "write", "maintain"}, {"triager", "read", "triage"},
		{"owner", "admin", "admin"}, {"stranger", "none", "none"},
	} {
		got, _, err := c.Repositories.GetPermissionLevel(t.Context(), "acme", "widgets", tc.user)
		if err != nil {
			t.Fatalf("GetPermissionLevel(%s): %v", tc.user, err)
		}
		if got.GetPermission() != tc.perm || got.GetRoleName() != tc.role || got.GetUser().GetLogin() != tc.user {
			t.Errorf("%s: permission %q role %q user %q; want %q %q", tc.user, got.GetPermission(), got.GetRoleName(), got.GetUser().GetLogin(), tc.perm, tc.role)
		}
	}
}

func TestCommentsAndReactions(t *testing.T) {
	s, _, sha, tok := setup(t)
	s.AddPull("acme", "widgets", 4, sha, "main", "acme/widgets", nil)
	cmd := s.AddComment("acme", "widgets", ghapptest.Comment{Issue: 4, User: "alice", Body: "/kilroy run"})
	c := client(t, s, tok)

	if _, _, err := c.Issues.CreateComment(t.Context(), "acme", "widgets", 4, github.IssueCommentRequest{Body: "on it"}); err != nil {
		t.Fatalf("CreateComment: %v", err)
	}
	if _, _, err := c.Issues.CreateComment(t.Context(), "acme", "widgets", 5, github.IssueCommentRequest{Body: "x"}); statusOf(err) != 404 {
		t.Errorf("comment on a missing PR: err %v, want 404", err)
	}
	comments := s.Comments("acme", "widgets")
	if len(comments) != 2 || comments[1].Body != "on it" || comments[1].User != s.AppSlug()+"[bot]" || !comments[1].ByBot {
		t.Errorf("comments = %+v, want alice's then the bot's", comments)
	}

	for _, want := range []int{201, 200} { // the second eyes is a no-op
		_, resp, err := c.Reactions.CreateIssueCommentReaction(t.Context(), "acme", "widgets", cmd.ID, "eyes")
		if err != nil || resp.StatusCode != want {
			t.Errorf("eyes reaction: %v, err %v; want %d", resp.StatusCode, err, want)
		}
	}
	if _, _, err := c.Reactions.CreateIssueCommentReaction(t.Context(), "acme", "widgets", cmd.ID, "party"); statusOf(err) != 422 {
		t.Errorf("bad reaction: err %v, want 422", err)
	}
	if _, _, err := c.Reactions.CreateIssueCommentReaction(t.Context(), "acme", "widgets", 1, "eyes"); statusOf(err) != 404 {
		t.Errorf("reaction on a missing comment: err %v, want 404", err)
	}
	if got := s.Reactions("acme", "widgets"); len(got) != 1 || got[0].CommentID != cmd.ID || !strings.EqualFold(got[0].Content, "eyes") {
		t.Errorf("reactions = %+v, want one eyes on %d", got, cmd.ID)
	}
}
