package chain

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/bench/internal/fixture"
	"github.com/kilroy-bot/kilroy-bot/runner"
	"github.com/kilroy-bot/kilroy-bot/runner/image"
	"github.com/kilroy-bot/kilroy-bot/runner/image/imagetest"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// BenchmarkChainImage is issue 24's bench/chain target: what a node costs
// in an image jail over the host jail. Each round runs the 50-node chain
// in the host jail and in an image already unpacked (the Debian base that
// scripts/install-podman.sh builds, served by a registry on loopback), the
// two taking turns at going first, and takes the median milliseconds
// between checkpoints of each. It reports each median and the image
// jail's extra cost per node, image minus host within a round: its
// median, min and max (target: at most 0.5 ms). Needs the sandbox and
// the Debian base (podman).
//
//	go test -run '^$' -bench ChainImage -benchtime 10x ./bench/chain
func BenchmarkChainImage(b *testing.B) {
	sb, err := sandbox.New(sandbox.Config{PATH: os.Getenv("PATH"), StateDir: b.TempDir()})
	if err == nil {
		err = sb.SelfTest(context.Background())
	}
	if err != nil {
		b.Skipf("needs the sandbox: %v", err)
	}
	b.Cleanup(sb.Close)
	base, _ := imagetest.DebianBase(b)
	ref := imagetest.Registry(b) + "/bench/debian:1"
	imagetest.Push(b, ref, base)
	store, err := image.Open(filepath.Join(b.TempDir(), "images"), image.Options{})
	if err != nil {
		b.Fatal(err)
	}
	repo := newRepo(b)
	run := func(img string) float64 {
		return botPerNode(b, repo, sb, runner.ImageOptions{Store: store, Override: img})
	}
	run(ref) // the pull and unpack, untimed
	var host, img, diff []float64
	defer b.ReportMetric(fixture.WaitForDisk(b, filepath.Join(repo, ".git"), b.TempDir(), b.TempDir()), "create-us")
	for round := 0; b.Loop(); round++ {
		var h, m float64
		if round%2 == 0 {
			h, m = run("host"), run(ref)
		} else {
			m, h = run(ref), run("host")
		}
		host, img, diff = append(host, h), append(img, m), append(diff, m-h)
	}
	b.ReportMetric(median(host), "host-ms/node")
	b.ReportMetric(median(img), "image-ms/node")
	b.ReportMetric(median(diff), "image-added-ms/node")
	b.ReportMetric(slices.Min(diff), "image-added-min")
	b.ReportMetric(slices.Max(diff), "image-added-max")
}
