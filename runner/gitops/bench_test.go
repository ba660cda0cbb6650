package gitops

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// Benchmark shape (issue: checkpoint within 1.3x of plain git).
const (
	benchTracked = 20000
	benchIgnored = 100000
	benchChanged = 250
)

// BenchmarkCheckpoint compares the bot's checkpoint (status, exclude
// filter, pathspec add, commit, HEAD checks) with a plain
// `git add -A && git commit` on an identical copy, in the same run and
// through the same hardened invocation. Both copies hold benchTracked
// tracked files and benchIgnored ignored files under node_modules
// directories; each iteration changes benchChanged paths in both (modified,
// added, deleted). Reported: bot-ms/op, plain-ms/op and bot/plain.
//
//	go test ./runner/gitops -run '^$' -bench Checkpoint -benchtime 5x
func BenchmarkCheckpoint(b *testing.B) {
	ctx := context.Background()
	g := newTestGit(b)
	botRepo := benchRepo(b, g, "bot")
	wt := filepath.Join(b.TempDir(), "wt")
	branch := RunBranch("bench", "1")
	head, err := g.HeadSHA(ctx, botRepo)
	if err != nil {
		b.Fatal(err)
	}
	if err := g.AddWorktree(ctx, botRepo, wt, branch, head); err != nil {
		b.Fatal(err)
	}
	writeIgnored(b, wt)
	plainRepo := benchRepo(b, g, "plain")
	writeIgnored(b, plainRepo)

	// One untimed round settles both indexes after checkout and the
	// initial commit (racily clean entries get re-hashed once), so every
	// timed round measures a node's steady-state checkpoint.
	warm := func(i int) {
		changePaths(b, wt, i)
		changePaths(b, plainRepo, i)
	}
	warm(-1)
	if _, err := g.Checkpoint(ctx, wt, CheckpointSpec{RunID: "1", NodeID: "warm", Status: "success", Branch: branch, Exclude: defaultExcludes}); err != nil {
		b.Fatal(err)
	}
	mustGit(b, g, plainRepo, "add", "-A")
	mustGit(b, g, plainRepo, "commit", "--quiet", "-m", "warm")

	var bot, plain time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		warm(i)
		b.StartTimer()
		runBot := func() {
			start := time.Now()
			res, err := g.Checkpoint(ctx, wt, CheckpointSpec{RunID: "1", NodeID: fmt.Sprint("n", i), Status: "success", Branch: branch, Exclude: defaultExcludes})
			bot += time.Since(start)
			if err != nil || len(res.Staged) != benchChanged {
				b.Fatalf("checkpoint: staged %d paths, err %v", len(res.Staged), err)
			}
		}
		runPlain := func() {
			start := time.Now()
			mustGit(b, g, plainRepo, "add", "-A")
			mustGit(b, g, plainRepo, "commit", "--quiet", "--allow-empty", "-m", fmt.Sprint("n", i))
			plain += time.Since(start)
		}
		// Alternate the order so neither side always runs on a warm cache.
		if i%2 == 0 {
			runBot()
			runPlain()
		} else {
			runPlain()
			runBot()
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(bot.Milliseconds())/n, "bot-ms/op")
	b.ReportMetric(float64(plain.Milliseconds())/n, "plain-ms/op")
	b.ReportMetric(float64(bot)/float64(plain), "bot/plain")
}

// benchRepo creates a repository with benchTracked committed files.
func benchRepo(b *testing.B, g *Git, name string) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), name)
	mustGit(b, g, filepath.Dir(dir), "init", "--quiet", "--initial-branch=main", dir)
	writeFile(b, dir, ".gitignore", "node_modules/\n")
	for i := range benchTracked {
		writeFile(b, dir, benchPath(i), fmt.Sprintf("package p%d // file %d\n", i/100, i))
	}
	mustGit(b, g, dir, "add", "-A")
	mustGit(b, g, dir, "commit", "--quiet", "-m", "initial")
	return dir
}

func benchPath(i int) string { return fmt.Sprintf("src/d%03d/f%03d.go", i/100, i%100) }

// writeIgnored fills node_modules directories, as an npm install would.
func writeIgnored(b *testing.B, root string) {
	b.Helper()
	for i := range benchIgnored {
		writeFile(b, root, fmt.Sprintf("app%d/node_modules/pkg%03d/f%03d.js", i%4, (i/100)%250, i%100), "module.exports = 1\n")
	}
}

// changePaths changes benchChanged paths of root for iteration iter (the
// warm-up round is -1): 200 modified, 25 added, 25 deleted.
func changePaths(b *testing.B, root string, iter int) {
	b.Helper()
	for k := range 200 {
		writeFile(b, root, benchPath(((iter+1)*200+k)%(benchTracked/2)), fmt.Sprintf("// iteration %d\n", iter))
	}
	for k := range 25 {
		writeFile(b, root, fmt.Sprintf("new/i%d/f%d.go", iter, k), "package added\n")
		removeFile(b, root, benchPath(benchTracked-1-((iter+1)*25+k)))
	}
}

func removeFile(b *testing.B, root, rel string) {
	b.Helper()
	if err := removeIfExists(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
		b.Fatal(err)
	}
}
