package policy

import (
	"time"
)

// ConfigVersion is the only `version` of `.kilroy/config.yml` this package
// reads.
const ConfigVersion = 1

// RepoConfig is a repository's `.kilroy/config.yml` with defaults applied.
type RepoConfig struct {
	Version int `json:"version"`
	// Pipelines by name. Nil when the file has no `pipelines` key: the
	// caller then takes every `.kilroy/*.dot` (see DefaultPipelines). An
	// empty non-nil map means the file declares none.
	Pipelines      map[string]Pipeline `json:"pipelines"`
	ArtifactPolicy ArtifactPolicy      `json:"artifact_policy"`
	Limits         Limits              `json:"limits"`
	// Image is the repository's `image:`; zero when it names none.
	Image ImageChoice `json:"image,omitzero"`
}

// Pipeline is one entry of `pipelines`.
type Pipeline struct {
	Name    string  `json:"name"`
	Graph   string  `json:"graph"` // repository-relative, slash-separated
	On      Trigger `json:"on"`
	Command bool    `json:"command"` // may be started with `/kilroy run <name>`
	// Image is the pipeline's `image:`, over the repository's; zero when
	// it names none.
	Image ImageChoice `json:"image,omitzero"`
}

// Trigger says which pull request events start a pipeline.
type Trigger struct {
	// PullRequest lists the actions that start a run; empty means none.
	PullRequest []string `json:"pull_request"`
	// Paths, when not empty, limits runs to changes matching a glob.
	Paths  []string `json:"paths,omitempty"`
	Drafts bool     `json:"drafts"`
	// MergeGroup runs the pipeline for the merge queue too: on a merge
	// group's head commit, with the base branch's pipelines (default true).
	MergeGroup bool `json:"merge_group"`
}

// Limits bounds how long runs and nodes may take.
type Limits struct {
	RunTimeout  time.Duration `json:"run_timeout"`
	NodeTimeout time.Duration `json:"node_timeout"`
	// MaxCostUSD and MaxTokens cap the run's coding agents (0: no cap).
	// A server's budget may lower them; the ...From fields then name the
	// setting the cap comes from instead of limits.max_cost_usd and
	// limits.max_tokens in the repository's config.
	MaxCostUSD     float64 `json:"max_cost_usd,omitempty"`
	MaxTokens      int64   `json:"max_tokens,omitempty"`
	MaxCostUSDFrom string  `json:"max_cost_usd_from,omitempty"`
	MaxTokensFrom  string  `json:"max_tokens_from,omitempty"`
}

// Default values of the repository configuration.
const (
	DefaultRunTimeout  = 60 * time.Minute
	DefaultNodeTimeout = 15 * time.Minute
)

// DefaultPullRequestActions are the pull_request actions that start a
// pipeline unless `on.pull_request` says otherwise.
func DefaultPullRequestActions() []string {
	return []string{"opened", "synchronize", "reopened", "ready_for_review"}
}

// The types below mirror the file as written; pointers tell an absent key
// from an explicit value. checkKeys walks them to find unknown keys, so
// their yaml tags are the list of known keys.
type fileConfig struct {
	Version        int                   `yaml:"version"`
	Pipelines      pairMap[filePipeline] `yaml:"pipelines"`
	ArtifactPolicy ArtifactPolicy        `yaml:"artifact_policy"`
	Limits         fileLimits            `yaml:"limits"`
	Image          string                `yaml:"image"`
}

type filePipeline struct {
	Graph   string      `yaml:"graph"`
	On      fileTrigger `yaml:"on"`
	Command *bool       `yaml:"command"`
	Image   string      `yaml:"image"`
}

type fileTrigger struct {
	PullRequest *[]string `yaml:"pull_request"`
	Paths       []string  `yaml:"paths"`
	Drafts      bool      `yaml:"drafts"`
	MergeGroup  *bool     `yaml:"merge_group"`
}

type fileLimits struct {
	RunTimeout  string   `yaml:"run_timeout"`
	NodeTimeout string   `yaml:"node_timeout"`
	MaxCostUSD  *float64 `yaml:"max_cost_usd"`
	MaxTokens   *int64   `yaml:"max_tokens"`
}

// withDefaults is the one place defaults are applied. Durations were
// checked by validateFile.
func withDefaults(f fileConfig, hasPipelines bool) *RepoConfig {
	c := &RepoConfig{Version: f.Version, ArtifactPolicy: f.ArtifactPolicy.WithDefaults()}
	c.Limits.RunTimeout, _ = parseLimit(f.Limits.RunTimeout, nil, DefaultRunTimeout)
	c.Limits.NodeTimeout, _ = parseLimit(f.Limits.NodeTimeout, nil, DefaultNodeTimeout)
	if f.Limits.MaxCostUSD != nil {
		c.Limits.MaxCostUSD = *f.Limits.MaxCostUSD
	}
	if f.Limits.MaxTokens != nil {
		c.Limits.MaxTokens = *f.Limits.MaxTokens
	}
	if hasPipelines {
		c.Pipelines = map[string]Pipeline{}
	}
	for name, fp := range f.Pipelines {
		c.Pipelines[name] = pipelineWithDefaults(name, fp)
	}
	return c
}

func pipelineWithDefaults(name string, fp filePipeline) Pipeline {
	p := Pipeline{
		Name:    name,
		Graph:   fp.Graph,
		Command: true,
		On: Trigger{PullRequest: DefaultPullRequestActions(), Paths: fp.On.Paths, Drafts: fp.On.Drafts,
			MergeGroup: true},
	}
	if p.Graph == "" {
		p.Graph = ".kilroy/" + name + ".dot"
	}
	if fp.Command != nil {
		p.Command = *fp.Command
	}
	if fp.On.MergeGroup != nil {
		p.On.MergeGroup = *fp.On.MergeGroup
	}
	if fp.On.PullRequest != nil {
		p.On.PullRequest = append([]string{}, *fp.On.PullRequest...)
	}
	return p
}
