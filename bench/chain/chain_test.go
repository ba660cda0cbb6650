package chain

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/bench/internal/fixture"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

const nodes = 50

// chainDOT is start -> n1 -> ... -> n50 -> exit, every node `true`.
func chainDOT() string { return chainOf(nodes) }

// chainOf is a chain of n `true` nodes.
func chainOf(nodes int) string {
	var b strings.Builder
	b.WriteString("digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n")
	prev := "start"
	for i := 1; i <= nodes; i++ {
		fmt.Fprintf(&b, "  n%d [shape=parallelogram, tool_command=\"true\"]\n  %s -> n%d\n", i, prev, i)
		prev = fmt.Sprintf("n%d", i)
	}
	fmt.Fprintf(&b, "  %s -> exit\n}\n", prev)
	return b.String()
}

func BenchmarkChain(b *testing.B) {
	repo := newRepo(b)
	floorRepo := newRepo(b)
	sb, err := sandbox.New(sandbox.Config{PATH: os.Getenv("PATH"), StateDir: b.TempDir()})
	if err == nil {
		err = sb.SelfTest(context.Background())
	}
	if err != nil {
		b.Logf("sandbox arm skipped: %v", err)
		sb = nil
	}
	b.Cleanup(sb.Close)
	var off, on, floor, ratioOff, ratioOn []float64
	// Where the two sides write: the bot's objects and runs, the floor's.
	defer b.ReportMetric(fixture.WaitForDisk(b, filepath.Join(repo, ".git"), filepath.Join(floorRepo, ".git"), b.TempDir()), "create-us")
	for round := 0; b.Loop(); round++ {
		// The arms take turns at going first: on this disk a file costs
		// more to create for a while after many were deleted, and the
		// floor makes fewer files per node than the bot.
		var f, o, s float64
		bot := func() {
			o = botPerNode(b, repo, nil, runner.ImageOptions{})
			if sb != nil {
				s = botPerNode(b, repo, sb, runner.ImageOptions{})
			}
		}
		if round%2 == 0 {
			f = floorPerNode(b, floorRepo)
			bot()
		} else {
			bot()
			f = floorPerNode(b, floorRepo)
		}
		floor, off = append(floor, f), append(off, o)
		ratioOff = append(ratioOff, o/f)
		if sb != nil {
			on, ratioOn = append(on, s), append(ratioOn, s/f)
		}
	}
	b.ReportMetric(median(floor), "floor-ms/node")
	b.ReportMetric(median(off), "bot-ms/node")
	b.ReportMetric(median(ratioOff), "ratio-median")
	b.ReportMetric(slices.Min(ratioOff), "ratio-min")
	b.ReportMetric(slices.Max(ratioOff), "ratio-max")
	if len(on) > 0 {
		b.ReportMetric(median(on), "sandbox-ms/node")
		diff := make([]float64, len(on))
		for i := range on {
			diff[i] = on[i] - off[i]
		}
		b.ReportMetric(median(diff), "sandbox-added-ms/node")
	}
}

// botPerNode runs the chain, in the image images chooses (the zero value:
// the host jail, or none without sb), and returns the median milliseconds
// between consecutive node checkpoints.
func botPerNode(b *testing.B, repo string, sb *sandbox.Sandbox, images runner.ImageOptions) float64 {
	runDir := filepath.Join(b.TempDir(), "run")
	_, res, err := runner.RunLocal(context.Background(), runner.LocalOptions{
		RepoDir: repo, RunDir: runDir, DataDir: b.TempDir(),
		Env:    runner.EnvInputs{Host: sandbox.HostEnv(), Sandbox: sb},
		Images: images,
	})
	if err != nil || res.Status != attractor.StatusSuccess {
		b.Fatalf("run (image %q): %v %+v", images.Override, err, res)
	}
	return medianInterval(b, checkpointTimes(b, filepath.Join(runDir, "progress.ndjson")))
}

func checkpointTimes(b *testing.B, path string) []time.Time {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []time.Time
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev struct {
			Time time.Time `json:"time"`
			Type string    `json:"type"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "checkpoint" {
			out = append(out, ev.Time)
		}
	}
	return out
}

// floorPerNode commits the way a person would, once per node, and returns
// the median milliseconds between commits.
func floorPerNode(b *testing.B, repo string) float64 {
	return medianInterval(b, floorCommits(b, repo, nodes+2))
}

func medianInterval(b *testing.B, ts []time.Time) float64 {
	if len(ts) < nodes {
		b.Fatalf("%d timestamps, want at least %d", len(ts), nodes)
	}
	return median(nodeIntervals(b, ts, len(ts)-1))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func newRepo(b *testing.B) string { return newRepoWith(b, chainDOT()) }

func newRepoWith(b *testing.B, dot string) string {
	dir := filepath.Join(b.TempDir(), "repo")
	os.MkdirAll(filepath.Join(dir, ".kilroy"), 0o755)
	os.WriteFile(filepath.Join(dir, ".kilroy", "ci.dot"), []byte(dot), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("chain\n"), 0o644)
	git(b, dir, "init", "-q", "-b", "main")
	git(b, dir, "add", "-A")
	git(b, dir, "commit", "-q", "-m", "init")
	return dir
}

func git(b *testing.B, dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.invalid", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// lengthNodes is BenchmarkChainLength's chain: windows of 19 nodes
// centred on node 10 (nodes 1-19) and on node 200 (191-209).
const lengthNodes = 209

// BenchmarkChainLength checks that a node costs the same late in a run as
// early: a 209-node chain, the median interval between checkpoints in the
// window around node 10 against the window around node 200, per run. The
// git floor makes as many commits in a repository of its own, the two
// taking turns at going first, and is measured the same way: the disk
// under both can make late commits dearer (bench/README.md), and the
// floor shows how much of a change is git's.
//
// A window holds 19 intervals, and one of them can be several times the
// others, so each run's ratio is noisy. A line fitted to log(interval)
// against the node's position, through each node's median over the runs,
// uses every node; its growth from node 10 to node 200 is reported beside
// the windows'.
//
//	go test -run '^$' -bench ChainLength -benchtime 15x ./bench/chain
func BenchmarkChainLength(b *testing.B) {
	repo := newRepoWith(b, chainOf(lengthNodes))
	floorRepo := newRepoWith(b, chainOf(lengthNodes))
	var bot, floor [][]float64
	defer b.ReportMetric(fixture.WaitForDisk(b, filepath.Join(repo, ".git"), filepath.Join(floorRepo, ".git"), b.TempDir()), "create-us")
	for round := 0; b.Loop(); round++ {
		runBot := func() {
			runDir := filepath.Join(b.TempDir(), "run")
			_, res, err := runner.RunLocal(context.Background(), runner.LocalOptions{
				RepoDir: repo, RunDir: runDir, DataDir: b.TempDir(), Env: runner.EnvInputs{Host: sandbox.HostEnv()},
			})
			if err != nil || res.Status != attractor.StatusSuccess {
				b.Fatalf("run: %v %+v", err, res)
			}
			// The first checkpoint is start's, then one per node.
			bot = append(bot, nodeIntervals(b, checkpointTimes(b, filepath.Join(runDir, "progress.ndjson")), lengthNodes))
		}
		runFloor := func() {
			floor = append(floor, nodeIntervals(b, floorCommits(b, floorRepo, lengthNodes+1), lengthNodes))
		}
		if round%2 == 0 {
			runBot()
			runFloor()
		} else {
			runFloor()
			runBot()
		}
	}
	early, late, ratio := windows(bot)
	b.ReportMetric(median(early), "node10-ms")
	b.ReportMetric(median(late), "node200-ms")
	b.ReportMetric(median(ratio), "late/early-median")
	b.ReportMetric(slices.Min(ratio), "late/early-min")
	b.ReportMetric(slices.Max(ratio), "late/early-max")
	b.ReportMetric(fitGrowth(bot), "fit-growth-10-to-200")
	_, _, floorRatio := windows(floor)
	b.ReportMetric(median(floorRatio), "floor-late/early-median")
	b.ReportMetric(fitGrowth(floor), "floor-fit-growth-10-to-200")
}

// nodeIntervals are the milliseconds node i (1-based) took, from the
// timestamp before it to its own: element i-1.
func nodeIntervals(b *testing.B, ts []time.Time, nodes int) []float64 {
	if len(ts) < nodes+1 {
		b.Fatalf("%d timestamps, want %d", len(ts), nodes+1)
	}
	iv := make([]float64, nodes)
	for i := range iv {
		iv[i] = float64(ts[i+1].Sub(ts[i])) / float64(time.Millisecond)
	}
	return iv
}

// floorCommits makes n commits the floor's way and returns when each
// ended.
func floorCommits(b *testing.B, repo string, n int) []time.Time {
	times := make([]time.Time, 0, n)
	for range n {
		git(b, repo, "add", "-A")
		git(b, repo, "commit", "-q", "--allow-empty", "-m", "x")
		times = append(times, time.Now())
	}
	return times
}

// windows are each run's median around node 10 and around node 200 and
// their ratio.
func windows(runs [][]float64) (early, late, ratio []float64) {
	for _, iv := range runs {
		e, l := median(iv[0:19]), median(iv[190:209])
		early, late, ratio = append(early, e), append(late, l), append(ratio, l/e)
	}
	return early, late, ratio
}

// fitGrowth fits log(ms) = a + k*node by least squares to each node's
// median over the runs (a median, so that the spikes of single runs do not
// tilt the line) and returns exp(k*190), the cost at node 200 over the
// cost at node 10 that the fit gives.
func fitGrowth(runs [][]float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for i := range runs[0] {
		at := make([]float64, len(runs))
		for r, iv := range runs {
			at[r] = iv[i]
		}
		x, y := float64(i+1), math.Log(median(at))
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	k := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return math.Exp(k * 190)
}
