package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// TestConfigLimitDurations: limits take the durations DOT attributes take,
// days and compound forms included.
func TestConfigLimitDurations(t *testing.T) {
	tests := []struct {
		run, node         string
		wantRun, wantNode time.Duration
	}{
		{"1d", "90m", 24 * time.Hour, 90 * time.Minute},
		{"1h30m", "250ms", 90 * time.Minute, 250 * time.Millisecond},
		{"2d12h", "1.5h", 60 * time.Hour, 90 * time.Minute},
		{"3600s", "1m30s", time.Hour, 90 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.run+"/"+tt.node, func(t *testing.T) {
			src := fmt.Sprintf("version: 1\nlimits:\n  run_timeout: %s\n  node_timeout: %s\n", tt.run, tt.node)
			got, err := ParseRepoConfig(configFile, []byte(src))
			if err != nil {
				t.Fatalf("ParseRepoConfig: %v", err)
			}
			want := Limits{RunTimeout: tt.wantRun, NodeTimeout: tt.wantNode}
			if diff := cmp.Diff(got.Limits, want); diff != "" {
				t.Errorf("limits (-got +want):\n%s", diff)
			}
			for _, v := range []string{tt.run, tt.node} {
				if _, err := attractor.ParseDuration(v); err != nil {
					t.Errorf("a DOT attribute rejects %q (%v), the config accepts it", v, err)
				}
			}
		})
	}
}

// TestConfigLimitBadDuration checks the whole message: file, line, key and
// the accepted forms. Go-only forms (ns, us, signs, ".5h") are refused as
// DOT refuses them.
func TestConfigLimitBadDuration(t *testing.T) {
	const forms = "A positive duration as pipeline attributes write them: units ms, s, m, h or d, alone or combined, such as 250ms, 90s, 15m, 1h30m or 1d."
	tests := []struct{ value, want string }{
		{"5 minutes", `.kilroy/config.yml:3:3: limits.run_timeout: "5 minutes" is not valid (` + forms + `)`},
		{"1us", `.kilroy/config.yml:3:3: limits.run_timeout: "1us" is not valid (` + forms + `)`},
		{"-5m", `.kilroy/config.yml:3:3: limits.run_timeout: "-5m" is not valid (` + forms + `)`},
		{".5h", `.kilroy/config.yml:3:3: limits.run_timeout: ".5h" is not valid (` + forms + `)`},
		{`"0"`, `.kilroy/config.yml:3:3: limits.run_timeout: invalid duration "0"; use a positive duration with units ms, s, m, h or d, alone or combined, such as 250ms, 90s, 15m, 1h30m or 1d`},
		{"9999999999d", `.kilroy/config.yml:3:3: limits.run_timeout: invalid duration "9999999999d": too long; use a positive duration with units ms, s, m, h or d, alone or combined, such as 250ms, 90s, 15m, 1h30m or 1d`},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			_, err := ParseRepoConfig(configFile, []byte("version: 1\nlimits:\n  run_timeout: "+tt.value+"\n"))
			if err == nil {
				t.Fatalf("ParseRepoConfig accepted run_timeout %q", tt.value)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got  %s\n want %s", got, tt.want)
			}
		})
	}
}

// durationCorpus holds forms either parser might get wrong.
var durationCorpus = []string{
	"0", "0s", "00", "1d", "90m", "250ms", "1h30m", "1.5h", "2d12h", "1m30s", "1ms5s", "15",
	"5 minutes", "1us", "1ns", "1µs", "-5m", "+5m", ".5h", "1.h", "1.", "h", "", "1H", "1dd", "1m s", " 1m", "1e3s",
}

// TestConfigDurationSchemaMatchesParser keeps the schema's duration pattern
// (what editors check) and attractor.ParseDuration (what runs) in step.
func TestConfigDurationSchemaMatchesParser(t *testing.T) {
	sch, err := newConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range durationCorpus {
		checkDurationAgreement(t, sch, s)
	}
}

func FuzzConfigDurationSchema(f *testing.F) {
	for _, s := range durationCorpus {
		f.Add(s)
	}
	sch, err := newConfigSchema()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) { checkDurationAgreement(t, sch, s) })
}

// checkDurationAgreement fails when the schema and the parser disagree on
// s. Only the parser knows a value is too long to represent.
func checkDurationAgreement(t *testing.T, sch *configSchema, s string) {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"version": 1, "limits": map[string]any{"node_timeout": s}})
	if err != nil {
		t.Skip("not representable in JSON")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	schemaOK := sch.compiled.Validate(v) == nil
	_, perr := attractor.ParseDuration(s)
	parserOK := perr == nil || strings.HasSuffix(perr.Error(), ": too long")
	if schemaOK != parserOK {
		t.Errorf("duration %q: schema accepts it: %v, attractor.ParseDuration: %v", s, schemaOK, perr)
	}
}
