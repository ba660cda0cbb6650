package deploy

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// noImagesLeft fails t if, once t and its other cleanups are done, eng
// holds untagged images it did not hold now: what a build leaves behind
// (a multi-stage build's first stage, some 650 MB a run). Call it before
// building, so that its check runs after the cleanups that remove what
// the test tagged. Another build on this machine at the same time would
// show here too; the message says which images, to tell them apart.
func noImagesLeft(t *testing.T, eng string) {
	t.Helper()
	before := danglingImages(t, eng)
	t.Cleanup(func() {
		var left []string
		for _, id := range danglingImages(t, eng) {
			if !slices.Contains(before, id) {
				left = append(left, id)
			}
		}
		if len(left) > 0 {
			t.Errorf("the test left untagged images behind (%s image inspect them): %s", eng, strings.Join(left, " "))
		}
	})
}

func danglingImages(t *testing.T, eng string) []string {
	out, err := exec.Command(eng, "images", "--quiet", "--no-trunc", "--filter", "dangling=true").Output()
	if err != nil {
		t.Errorf("%s images: %v", eng, err)
		return nil
	}
	return strings.Fields(string(out))
}
