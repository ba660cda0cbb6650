package ghapptest

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Deleted, as a file's content in Repo.Commit, removes the file.
const Deleted = "\x00ghapptest: deleted\x00"

// zeroSHA as update-ref's old value means "the ref must not exist yet".
const zeroSHA = "0000000000000000000000000000000000000000"

// Commit adds a commit to branch with files written (path → content; the
// Deleted content removes a path) on top of the branch's tip, or of main's
// tip when the branch is new, or as a root commit in an empty repository.
// It returns the new commit's SHA.
//
// It builds the commit with git plumbing straight in the bare repository
// rather than pushing from a scratch clone: same result, no worktree to
// reset between branches, and update-ref's old-value check still refuses a
// lost race with a push from the bot.
func (r *Repo) Commit(t testing.TB, branch string, files map[string]string, msg string) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	sha, err := r.commit(t.Context(), branch, files, msg)
	if err != nil {
		t.Fatalf("ghapptest: commit to %s %s: %v", r.FullName(), branch, err)
	}
	return sha
}

func (r *Repo) commit(ctx context.Context, branch string, files map[string]string, msg string) (string, error) {
	g := r.s.git
	old, err := resolveCommit(ctx, g, r.Dir, "refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	parent := old
	if parent == "" {
		if parent, err = resolveCommit(ctx, g, r.Dir, "refs/heads/"+defaultBranch); err != nil {
			return "", err
		}
	}
	tree, err := r.writeTree(ctx, parent, files)
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", tree, "-m", msg}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	out, err := g.run(ctx, r.Dir, nil, identityEnv(), args...)
	if err != nil {
		return "", err
	}
	sha := strings.TrimSpace(out)
	if old == "" {
		old = zeroSHA
	}
	if _, err := g.run(ctx, r.Dir, nil, nil, "update-ref", "refs/heads/"+branch, sha, old); err != nil {
		return "", err
	}
	return sha, nil
}

// writeTree returns the tree of parent (or the empty tree) with files
// applied, using a private index file.
func (r *Repo) writeTree(ctx context.Context, parent string, files map[string]string) (string, error) {
	g := r.s.git
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(r.scratch, "index")}
	readTree := []string{"read-tree", "--empty"}
	if parent != "" {
		readTree = []string{"read-tree", parent}
	}
	if _, err := g.run(ctx, r.Dir, nil, env, readTree...); err != nil {
		return "", err
	}
	// One --index-info call stages every change; it works without a work
	// tree, where --add and --force-remove would not.
	var info strings.Builder
	for _, p := range slices.Sorted(maps.Keys(files)) {
		line, err := r.indexLine(ctx, p, files[p])
		if err != nil {
			return "", err
		}
		info.WriteString(line)
	}
	if _, err := g.run(ctx, r.Dir, strings.NewReader(info.String()), env, "update-index", "--index-info"); err != nil {
		return "", err
	}
	out, err := g.run(ctx, r.Dir, nil, env, "write-tree")
	return strings.TrimSpace(out), err
}

// indexLine is path's --index-info line: mode 0 removes it, else its
// content is written as a blob.
func (r *Repo) indexLine(ctx context.Context, path, content string) (string, error) {
	if strings.ContainsAny(path, "\t\n") {
		return "", fmt.Errorf("path %q: tab or newline", path)
	}
	if content == Deleted {
		return fmt.Sprintf("0 %s\t%s\n", zeroSHA, path), nil
	}
	blob, err := r.s.git.run(ctx, r.Dir, strings.NewReader(content), nil, "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("100644 %s\t%s\n", strings.TrimSpace(blob), path), nil
}

// identityEnv is the author of commits the test makes, set without
// touching any git configuration.
func identityEnv() []string {
	return []string{
		"GIT_AUTHOR_NAME=ghapptest", "GIT_AUTHOR_EMAIL=ghapptest@example.com",
		"GIT_COMMITTER_NAME=ghapptest", "GIT_COMMITTER_EMAIL=ghapptest@example.com",
	}
}
