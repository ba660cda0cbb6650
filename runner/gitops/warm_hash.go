package gitops

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// treeNode is what git's cache tree records of a directory of the index:
// how many entries lie below it and the id of the tree they make.
type treeNode struct {
	count int
	oid   [sha1Bytes]byte
}

// indexTrees computes, as `git write-tree` would, the id of the tree of
// every directory of the index ("" is the top), from the entries alone:
// the tree id of the top names exactly the content the index holds, so a
// two-way `read-tree` from it cannot mistake anything in the index for
// what a commit holds. Entries out of git's order are an error.
func indexTrees(entries []indexEntry) (map[string]treeNode, error) {
	h := &treeHasher{entries: entries, nodes: make(map[string]treeNode, len(entries)/8+1), sum: sha1.New()}
	if _, err := h.tree("", 0, len(entries)); err != nil {
		return nil, err
	}
	return h.nodes, nil
}

type treeHasher struct {
	entries []indexEntry
	nodes   map[string]treeNode
	sum     hash.Hash
	// bodies holds the tree objects being built, a directory's after its
	// parent's: one is done before its parent's grows again.
	bodies []byte
}

// tree hashes the directory prefix (empty or ending in "/") whose entries
// are entries[lo:hi].
func (h *treeHasher) tree(prefix string, lo, hi int) ([sha1Bytes]byte, error) {
	start := len(h.bodies)
	prev, prevDir := "", false
	for i := lo; i < hi; {
		name := h.entries[i].path[len(prefix):]
		mode, oid, isDir := modeString(h.entries[i].mode), h.entries[i].oid, false
		if dir, _, ok := strings.Cut(name, "/"); ok {
			sub := prefix + dir + "/"
			j := i + 1
			for j < hi && strings.HasPrefix(h.entries[j].path, sub) {
				j++
			}
			var err error
			if oid, err = h.tree(sub, i, j); err != nil {
				return oid, err
			}
			mode, name, isDir, i = "40000", dir, true, j
		} else {
			i++
		}
		if prev != "" && compareTreeNames(prev, prevDir, name, isDir) >= 0 {
			return oid, fmt.Errorf("index: %q out of order", prefix+name)
		}
		prev, prevDir = name, isDir
		h.bodies = append(h.bodies, mode...)
		h.bodies = append(h.bodies, ' ')
		h.bodies = append(h.bodies, name...)
		h.bodies = append(h.bodies, 0)
		h.bodies = append(h.bodies, oid[:]...)
	}
	body := h.bodies[start:]
	var header [32]byte
	h.sum.Reset()
	h.sum.Write(strconv.AppendInt(append(header[:0], "tree "...), int64(len(body)), 10))
	h.sum.Write([]byte{0})
	h.sum.Write(body)
	var oid [sha1Bytes]byte
	h.sum.Sum(oid[:0])
	h.bodies = h.bodies[:start]
	h.nodes[strings.TrimSuffix(prefix, "/")] = treeNode{count: hi - lo, oid: oid}
	return oid, nil
}

// compareTreeNames orders two entries of a tree as git does: by name, a
// directory's compared as if it ended in "/".
func compareTreeNames(a string, aDir bool, b string, bDir bool) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	return int(nextByte(a, n, aDir)) - int(nextByte(b, n, bDir))
}

func nextByte(s string, n int, dir bool) byte {
	switch {
	case n < len(s):
		return s[n]
	case dir:
		return '/'
	}
	return 0
}

// checkCacheTree says whether the cache tree extension b agrees with the
// trees the entries make. Git trusts a valid cache tree node in place of
// the entries below it (unpack_trees skips them when the node matches the
// commit's tree), so a node a run forged would pass its entries off as the
// commit's.
func checkCacheTree(b []byte, trees map[string]treeNode) error {
	rest, err := checkTreeNode(b, "", trees, 0)
	if err != nil {
		return fmt.Errorf("index: cache tree: %w", err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("index: cache tree: %d bytes after the top", len(rest))
	}
	return nil
}

// checkTreeNode reads one node of the cache tree (name NUL, entry count,
// space, subtree count, newline, id when the count is not -1, then the
// subtrees) under the directory prefix and returns what follows it.
func checkTreeNode(b []byte, prefix string, trees map[string]treeNode, depth int) ([]byte, error) {
	if depth > 4096 {
		return nil, fmt.Errorf("nested too deep")
	}
	name, b, ok := bytes.Cut(b, []byte{0})
	header, b, ok2 := bytes.Cut(b, []byte{'\n'})
	if !ok || !ok2 {
		return nil, fmt.Errorf("truncated")
	}
	countS, subS, _ := strings.Cut(string(header), " ")
	count, err1 := strconv.Atoi(countS)
	subtrees, err2 := strconv.Atoi(subS)
	if err1 != nil || err2 != nil || subtrees < 0 || count < -1 {
		return nil, fmt.Errorf("bad node header %q", header)
	}
	dir := prefix + string(name)
	if count >= 0 {
		if len(b) < sha1Bytes {
			return nil, fmt.Errorf("truncated")
		}
		if n, ok := trees[dir]; !ok || n.count != count || !bytes.Equal(n.oid[:], b[:sha1Bytes]) {
			return nil, fmt.Errorf("%q: %d entries, tree %s: not what the entries make", dir, count, hex.EncodeToString(b[:sha1Bytes]))
		}
		b = b[sha1Bytes:]
	}
	if dir != "" {
		dir += "/"
	}
	for range subtrees {
		var err error
		if b, err = checkTreeNode(b, dir, trees, depth+1); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// modeString is how a tree object writes an entry's mode.
func modeString(mode uint32) string {
	switch mode {
	case modeExec:
		return "100755"
	case modeSymlink:
		return "120000"
	case modeGitlink:
		return "160000"
	}
	return "100644"
}
