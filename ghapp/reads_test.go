package ghapp

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/ghapp/ghapptest"
)

func TestPullRequest(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.AddRepo("mallory", "widgets")
	f.srv.PutPull("acme", "widgets", ghapptest.Pull{Number: 5, Title: "Add things", Author: "alice",
		HeadSHA: f.sha, HeadRef: "things", Draft: true})
	f.srv.PutPull("acme", "widgets", ghapptest.Pull{Number: 6, HeadSHA: f.sha, HeadRepo: "mallory/widgets"})
	c := f.client(t)

	got, err := c.PullRequest(t.Context(), f.r, 5)
	if err != nil {
		t.Fatalf("PullRequest: %v", err)
	}
	want := PullRequest{Number: 5, State: "open", Draft: true, Title: "Add things", Author: "alice",
		HeadSHA: f.sha, HeadRef: "things", HeadRepo: "acme/widgets",
		BaseRef: "main", BaseSHA: f.sha, BaseRepo: "acme/widgets"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("PullRequest (-got +want):\n%s", diff)
	}
	if got.FromFork() {
		t.Error("same-repository PR reported as a fork")
	}
	fork, err := c.PullRequest(t.Context(), f.r, 6)
	if err != nil {
		t.Fatalf("PullRequest: %v", err)
	}
	if !fork.FromFork() || fork.HeadRepo != "mallory/widgets" {
		t.Errorf("fork PR: FromFork %v, HeadRepo %q; want true, mallory/widgets", fork.FromFork(), fork.HeadRepo)
	}
	if _, err := c.PullRequest(t.Context(), f.r, 99); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing PR: error %v, want ErrNotFound", err)
	}
}

func TestPullRequestFilesAcrossPages(t *testing.T) {
	f := newFixture(t, nil)
	var files []string
	for i := range 250 {
		files = append(files, fmt.Sprintf("dir/file%03d.go", i))
	}
	f.srv.AddPull("acme", "widgets", 8, f.sha, "main", "", files)
	got, err := f.client(t).PullRequestFiles(t.Context(), f.r, 8)
	if err != nil {
		t.Fatalf("PullRequestFiles: %v", err)
	}
	if diff := cmp.Diff(got, files); diff != "" {
		t.Errorf("files (-got +want):\n%s", diff)
	}
	if n := len(f.requests("GET", "/pulls/8/files")); n != 3 {
		t.Errorf("fetched %d pages, want 3 (100 a page)", n)
	}
}

func TestCollaboratorPermission(t *testing.T) {
	f := newFixture(t, nil)
	for user, role := range map[string]string{"ada": "admin", "max": "maintain", "wes": "write", "tri": "triage", "rea": "read"} {
		f.srv.SetPermission("acme", "widgets", user, role)
	}
	// GitHub answers 404 for a login it does not know.
	f.srv.FailNext("GET", "/api/v3/repos/acme/widgets/collaborators/ghost/permission", 1, http.StatusNotFound, nil)
	tests := []struct{ user, want string }{
		{"ada", "admin"}, {"max", "write"}, {"wes", "write"}, {"tri", "read"}, {"rea", "read"},
		{"stranger", "none"}, {"ghost", "none"},
	}
	c := f.client(t)
	for _, tt := range tests {
		got, err := c.CollaboratorPermission(t.Context(), f.r, tt.user)
		if err != nil || got != tt.want {
			t.Errorf("CollaboratorPermission(%s) = %q, %v; want %q", tt.user, got, err, tt.want)
		}
	}
	if got := statuses(f.requests("GET", "/collaborators/ghost/permission")); !cmp.Equal(got, []int{404}) {
		t.Errorf("ghost lookups: statuses %v, want one 404", got)
	}
}

func TestCollaboratorPermissionForbiddenIsAnError(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.SetPermission("acme", "widgets", "wes", "write")
	f.srv.Inject(ghapptest.Fault{Method: "GET", Path: "/api/v3/repos/acme/widgets/collaborators/*/permission",
		Times: 1, Status: http.StatusForbidden,
		Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest"}`})
	got, err := f.client(t).CollaboratorPermission(t.Context(), f.r, "wes")
	if !errors.Is(err, ErrForbidden) {
		t.Errorf("CollaboratorPermission = %q, %v; want ErrForbidden (never a guess)", got, err)
	}
	if n := len(f.requests("GET", "/permission")); n != 1 {
		t.Errorf("sent %d requests, want 1: a plain 403 is not a rate limit", n)
	}
}

func TestFileContentAndListDir(t *testing.T) {
	f := newFixture(t, nil)
	blob := string(make([]byte, 300)) + "tail\n" // long enough for GitHub's wrapped base64
	sha2 := f.repo.Commit(t, "feature", map[string]string{".kilroy/ci.dot": "digraph changed {}\n", "bin.dat": blob}, "change")
	c := f.client(t)

	tests := []struct {
		path, ref, want string
	}{
		{".kilroy/ci.dot", "", "digraph ci { start [shape=Mdiamond] }\n"},
		{".kilroy/ci.dot", "main", "digraph ci { start [shape=Mdiamond] }\n"},
		{".kilroy/ci.dot", sha2, "digraph changed {}\n"},
		{"bin.dat", "feature", blob},
	}
	for _, tt := range tests {
		got, err := c.FileContent(t.Context(), f.r, tt.path, tt.ref)
		if err != nil || string(got) != tt.want {
			t.Errorf("FileContent(%s, %q) = %q, %v; want %q", tt.path, tt.ref, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ path, ref string }{{"missing.txt", ""}, {".kilroy/ci.dot", "no-such-branch"}} {
		if _, err := c.FileContent(t.Context(), f.r, tt.path, tt.ref); !errors.Is(err, ErrNotFound) {
			t.Errorf("FileContent(%s, %q) error = %v, want ErrNotFound", tt.path, tt.ref, err)
		}
	}
	if _, err := c.FileContent(t.Context(), f.r, ".kilroy", ""); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("FileContent of a directory: error %v, want a not-a-file error", err)
	}

	entries, err := c.ListDir(t.Context(), f.r, ".kilroy", "main")
	if err != nil {
		t.Fatalf("ListDir: %v", err)
	}
	want := []DirEntry{
		{Name: "ci.dot", Path: ".kilroy/ci.dot", Type: "file", Size: 38},
		{Name: "config.yml", Path: ".kilroy/config.yml", Type: "file", Size: 11},
	}
	if diff := cmp.Diff(entries, want); diff != "" {
		t.Errorf("ListDir (-got +want):\n%s", diff)
	}
	if _, err := c.ListDir(t.Context(), f.r, "nope", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("ListDir(nope) error = %v, want ErrNotFound", err)
	}
	if _, err := c.ListDir(t.Context(), f.r, "README.md", ""); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("ListDir of a file: error %v, want a not-a-directory error", err)
	}
}

func TestCommentAndReaction(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.AddPull("acme", "widgets", 4, f.sha, "main", "", nil)
	user := f.srv.AddComment("acme", "widgets", ghapptest.Comment{Issue: 4, User: "alice", Body: "/kilroy run"})
	c := f.client(t)

	id, err := c.CreateComment(t.Context(), f.r, 4, "Unknown command.")
	if err != nil {
		t.Fatalf("CreateComment: %v", err)
	}
	comments := f.srv.Comments("acme", "widgets")
	if len(comments) != 2 || comments[1].ID != id || !comments[1].ByBot || comments[1].Body != "Unknown command." {
		t.Errorf("comments = %+v, want the user's and the bot's reply with id %d", comments, id)
	}

	// A 502 on a reaction is retried: GitHub keeps one reaction per user
	// and content, so a repeat is harmless.
	f.srv.FailNext("POST", "/api/v3/repos/*/*/issues/comments/*/reactions", 1, http.StatusBadGateway, nil)
	for range 2 {
		if err := c.AddReaction(t.Context(), f.r, user.ID, "eyes"); err != nil {
			t.Fatalf("AddReaction: %v", err)
		}
	}
	want := []ghapptest.Reaction{{CommentID: user.ID, Content: "eyes", User: f.srv.AppSlug() + "[bot]"}}
	got := f.srv.Reactions("acme", "widgets")
	for i := range got {
		got[i].ID = 0
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("reactions (-got +want):\n%s", diff)
	}
}

func TestCreateCommentNotRepeatedAfter502(t *testing.T) {
	f := newFixture(t, failAfter("POST", "/comments"))
	f.srv.AddPull("acme", "widgets", 4, f.sha, "main", "", nil)
	_, err := f.client(t).CreateComment(t.Context(), f.r, 4, "hello")
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusBadGateway {
		t.Fatalf("CreateComment error = %v, want the 502", err)
	}
	if n := len(f.srv.Comments("acme", "widgets")); n != 1 {
		t.Errorf("%d comments, want 1: a POST that may have succeeded is not repeated", n)
	}
}
