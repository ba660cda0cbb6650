package runner

import "testing"

func TestGraphFile(t *testing.T) {
	for _, tc := range []struct {
		want   string
		file   string
		isPath bool
	}{
		{want: "ci"},
		{want: ".kilroy/ci.dot", file: ".kilroy/ci.dot", isPath: true},
		{want: "./experiments//try.dot", file: "experiments/try.dot", isPath: true},
		{want: "/repo/sub/x.dot", file: "sub/x.dot", isPath: true},
		{want: "/elsewhere/x.dot", file: "../elsewhere/x.dot", isPath: true}, // refused by policy.DefaultPipelines
	} {
		file, isPath := graphFile("/repo", tc.want)
		if file != tc.file || isPath != tc.isPath {
			t.Errorf("graphFile(/repo, %q) = %q, %v; want %q, %v", tc.want, file, isPath, tc.file, tc.isPath)
		}
	}
}
