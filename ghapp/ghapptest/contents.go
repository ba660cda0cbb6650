package ghapptest

import (
	"bufio"
	"cmp"
	"encoding/base64"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// getContents serves GET /repos/{owner}/{repo}/contents/{path}?ref=, read
// from the real repository: a file as base64 (wrapped at 60 characters like
// GitHub's), a directory as its entry list.
func (s *Server) getContents(w http.ResponseWriter, r *http.Request) error {
	rs, err := s.authorize(r, "read", "contents")
	if err != nil {
		return err
	}
	ref := cmp.Or(r.URL.Query().Get("ref"), defaultBranch)
	sha, err := resolveCommit(r.Context(), s.git, rs.dir, ref)
	if err != nil {
		return err
	}
	if sha == "" {
		return &apiError{status: http.StatusNotFound, message: "No commit found for the ref " + ref}
	}
	p := strings.Trim(r.PathValue("path"), "/")
	if seg := "/" + p + "/"; strings.Contains(seg, "/../") || strings.Contains(seg, "/./") {
		return errNotFound() // git would read these relative to a working directory
	}
	obj, typ, size, err := s.lookupPath(r, rs, sha, p)
	if err != nil {
		return err
	}
	if typ == "tree" {
		return s.writeDir(w, r, rs, sha, p)
	}
	blob, err := s.git.run(r.Context(), rs.dir, nil, nil, "cat-file", "blob", obj)
	if err != nil {
		return err
	}
	out := s.contentJSON(rs, ref, p, "file", obj, size)
	out["encoding"] = "base64"
	out["content"] = wrap60(base64.StdEncoding.EncodeToString([]byte(blob)))
	return writeJSON(w, http.StatusOK, out)
}

// lookupPath finds path in commit sha: its object id, type and size.
func (s *Server) lookupPath(r *http.Request, rs *repoState, sha, p string) (obj, typ string, size int64, err error) {
	spec := sha + ":" + p
	out, err := s.git.run(r.Context(), rs.dir, strings.NewReader(spec+"\n"), nil,
		"cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)")
	if err != nil {
		return "", "", 0, err
	}
	f := strings.Fields(out)
	if len(f) != 3 || (f[1] != "blob" && f[1] != "tree") {
		return "", "", 0, errNotFound() // "<spec> missing", or a submodule
	}
	size, _ = strconv.ParseInt(f[2], 10, 64)
	return f[0], f[1], size, nil
}

func (s *Server) writeDir(w http.ResponseWriter, r *http.Request, rs *repoState, sha, dir string) error {
	spec := sha
	if dir != "" {
		spec = sha + ":" + dir
	}
	out, err := s.git.run(r.Context(), rs.dir, nil, nil, "ls-tree", "-l", spec)
	if err != nil {
		return err
	}
	entries := []map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		// "<mode> <type> <object> <size>\t<name>"
		meta, name, _ := strings.Cut(sc.Text(), "\t")
		f := strings.Fields(meta)
		if len(f) != 4 {
			continue
		}
		typ := map[string]string{"blob": "file", "tree": "dir", "commit": "submodule"}[f[1]]
		size, _ := strconv.ParseInt(f[3], 10, 64)
		entries = append(entries, s.contentJSON(rs, r.URL.Query().Get("ref"), path.Join(dir, name), typ, f[2], size))
	}
	return writeJSON(w, http.StatusOK, entries)
}

func (s *Server) contentJSON(rs *repoState, ref, p, typ, obj string, size int64) map[string]any {
	api := fmt.Sprintf("%srepos/%s/contents/%s", s.APIURL(), rs.fullName(), p)
	if ref != "" {
		api += "?ref=" + ref
	}
	return map[string]any{
		"type":         typ,
		"name":         path.Base(p),
		"path":         p,
		"sha":          obj,
		"size":         size,
		"url":          api,
		"html_url":     fmt.Sprintf("%s/%s/blob/%s/%s", s.URL(), rs.fullName(), cmp.Or(ref, defaultBranch), p),
		"git_url":      fmt.Sprintf("%srepos/%s/git/blobs/%s", s.APIURL(), rs.fullName(), obj),
		"download_url": nil,
	}
}

// wrap60 breaks base64 into lines as GitHub's contents API does; clients
// must cope with the newlines.
func wrap60(s string) string {
	var b strings.Builder
	for len(s) > 60 {
		b.WriteString(s[:60])
		b.WriteByte('\n')
		s = s[60:]
	}
	b.WriteString(s)
	b.WriteByte('\n')
	return b.String()
}
