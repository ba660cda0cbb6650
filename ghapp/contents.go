package ghapp

import (
	"context"
	"fmt"

	"github.com/google/go-github/v92/github"
)

// DirEntry is one entry of a directory listing.
type DirEntry struct {
	Name string
	Path string
	Type string // file, dir, symlink, submodule
	Size int64
}

// FileContent is the content of the file at path on ref (a branch, tag or
// SHA; empty for the default branch). A missing file or ref matches
// ErrNotFound; a directory is an error.
func (c *Client) FileContent(ctx context.Context, repo Repo, path, ref string) ([]byte, error) {
	op := fmt.Sprintf("read %s at %q", path, ref)
	file, dir, err := c.contents(ctx, repo, path, ref)
	if err != nil {
		return nil, c.fail(op, repo, err)
	}
	if file == nil || dir != nil || file.GetType() != "file" {
		return nil, c.fail(op, repo, fmt.Errorf("%s is not a file", path))
	}
	// GetContent decodes GitHub's base64 (line breaks included) and fails
	// with an explanation for files over 1 MB, which come without content.
	s, err := file.GetContent()
	if err != nil {
		return nil, c.fail(op, repo, err)
	}
	return []byte(s), nil
}

// ListDir lists the directory at dir on ref ("" is the root). A missing
// directory or ref matches ErrNotFound; a file is an error.
func (c *Client) ListDir(ctx context.Context, repo Repo, dir, ref string) ([]DirEntry, error) {
	op := fmt.Sprintf("list %s at %q", dir, ref)
	file, entries, err := c.contents(ctx, repo, dir, ref)
	if err != nil {
		return nil, c.fail(op, repo, err)
	}
	if file != nil {
		return nil, c.fail(op, repo, fmt.Errorf("%s is not a directory", dir))
	}
	out := make([]DirEntry, len(entries))
	for i, e := range entries {
		out[i] = DirEntry{Name: e.GetName(), Path: e.GetPath(), Type: e.GetType(), Size: int64(e.GetSize())}
	}
	return out, nil
}

func (c *Client) contents(ctx context.Context, repo Repo, path, ref string) (*github.RepositoryContent, []*github.RepositoryContent, error) {
	gh, err := c.api()
	if err != nil {
		return nil, nil, err
	}
	file, dir, _, err := gh.Repositories.GetContents(ctx, repo.Owner, repo.Name, path,
		&github.RepositoryContentGetOptions{Ref: ref})
	return file, dir, err
}
