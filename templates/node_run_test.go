package templates_test

import (
	"os/exec"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// nodePackage is a package whose lint and test scripts need only node
// itself, with a lockfile of no dependencies, so `npm ci` needs no
// registry.
var nodePackage = map[string]string{
	"package.json": `{
  "name": "hello",
  "version": "1.0.0",
  "private": true,
  "scripts": {
    "lint": "node --check hello.js",
    "test": "node --test"
  }
}
`,
	"package-lock.json": `{
  "name": "hello",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "hello",
      "version": "1.0.0"
    }
  }
}
`,
	"hello.js": "exports.greet = (name) => `hello, ${name}`;\n",
	"hello.test.js": `const test = require("node:test");
const assert = require("node:assert");
const { greet } = require("./hello.js");

test("greet", () => {
  assert.strictEqual(greet("world"), "hello, world");
});
`,
}

// The ci-node template runs end to end, with and without the node
// sandbox: npm ci installs from the lockfile, a syntax error fails lint,
// a failing test fails test, and a sound package passes every step.
func TestCINodeTemplateRuns(t *testing.T) { bothWays(t, testCINodeTemplateRuns) }

func testCINodeTemplateRuns(t *testing.T, sb *sandbox.Sandbox) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: running the ci-node template needs it", tool)
		}
	}
	tests := []struct {
		name          string
		hello         string // hello.js, when not the sound one
		wantStatus    attractor.Status
		wantFailed    string
		wantCompleted []string
	}{
		{
			name: "syntax error", hello: "exports.greet = (name) => `hello, ${name}`\n}\n",
			wantStatus: attractor.StatusFail, wantFailed: "lint",
			wantCompleted: []string{"start", "install", "lint"},
		},
		{
			name: "failing test", hello: "exports.greet = (name) => `goodbye, ${name}`;\n",
			wantStatus: attractor.StatusFail, wantFailed: "test",
			wantCompleted: []string{"start", "install", "lint", "test"},
		},
		{
			name:          "passing",
			wantStatus:    attractor.StatusSuccess,
			wantCompleted: []string{"start", "install", "lint", "test", "exit"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := with(nodePackage, "hello.js", tt.hello)
			res := runGraph(t, sb, newRepo(t, "ci-node", files), "ci", nil, nil)
			checkRun(t, res, tt.wantStatus, tt.wantFailed, tt.wantCompleted)
		})
	}
}

// with is files with name's content replaced by content, unless content
// is empty.
func with(files map[string]string, name, content string) map[string]string {
	out := make(map[string]string, len(files))
	for k, v := range files {
		out[k] = v
	}
	if content != "" {
		out[name] = content
	}
	return out
}
