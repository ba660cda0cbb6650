package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner"
)

// config reads the repository configuration at rev. ok is false when the
// event ends here: the commit has no pipelines (the repository does not
// use kilroy; logged), or the configuration is invalid (reported as a
// failed kilroy/config check on headSHA).
func (w *eventWork) config(ctx context.Context, mirror, rev, headSHA string) (*policy.RepoConfig, bool, error) {
	cfg, err := runner.LoadRepoConfig(ctx, w.git, mirror, rev)
	var none *runner.NoPipelinesError
	switch {
	case err == nil && w.s.o.Caps.tooManyPipelines(len(cfg.Pipelines)) != "":
		msg := w.s.o.Caps.tooManyPipelines(len(cfg.Pipelines))
		w.log.Info("event: too many pipelines", "rev", rev, "count", len(cfg.Pipelines))
		return nil, false, w.configCheck(ctx, headSHA, "Too many pipelines", []error{&policy.ConfigError{File: runner.ConfigPath, Key: "pipelines", Msg: msg}})
	case err == nil:
		return cfg, true, nil
	case errors.As(err, &none):
		w.log.Info("event: no .kilroy pipelines; nothing to run", "rev", rev)
		return nil, false, nil
	case errors.Is(err, runner.ErrUsage):
		w.log.Info("event: invalid configuration", "rev", rev, "err", err)
		return nil, false, w.configCheck(ctx, headSHA, "Invalid "+runner.ConfigPath, []error{err})
	default:
		return nil, false, err
	}
}

// selectForPR picks the pipelines a pull request event starts: those
// whose `on.pull_request` lists the action, not drafts unless they opt
// in, and with `paths`, only when a changed file matches.
func (w *eventWork) selectForPR(ctx context.Context, cfg *policy.RepoConfig, pr PullRequest) ([]string, error) {
	var files []string
	var listed bool
	var names []string
	for _, name := range slices.Sorted(maps.Keys(cfg.Pipelines)) {
		pl := cfg.Pipelines[name]
		switch {
		case !slices.Contains(pl.On.PullRequest, w.ev.Action):
			w.log.Debug("event: pipeline not triggered by action", "pipeline", name, "action", w.ev.Action)
			continue
		case pr.Draft && !pl.On.Drafts:
			w.log.Info("event: draft pull request skipped", "pipeline", name)
			continue
		}
		if len(pl.On.Paths) > 0 {
			if !listed {
				var err error
				if files, err = w.gh.PullRequestFiles(ctx, w.ev.Repo, pr.Number); err != nil {
					return nil, err
				}
				listed = true
			}
			if !anyMatch(pl.On.Paths, files) {
				w.log.Info("event: no changed file matches the pipeline's paths", "pipeline", name)
				continue
			}
		}
		names = append(names, name)
	}
	return names, nil
}

// anyMatch reports whether a glob matches a path. Globs were validated
// when the configuration was read.
func anyMatch(globs, paths []string) bool {
	for _, p := range paths {
		for _, g := range globs {
			if ok, _ := doublestar.Match(g, p); ok {
				return true
			}
		}
	}
	return false
}

// loadPipelines reads and validates the named pipelines at rev, within
// the server's graph caps. Those that do not validate are reported
// together on one kilroy/config check and left out. A graph is loaded
// once however many pipelines name it; they share the validated
// Pipeline, which nothing here changes.
func (w *eventWork) loadPipelines(ctx context.Context, mirror, rev, headSHA string, cfg *policy.RepoConfig, names []string) ([]*runner.Selection, error) {
	var sels []*runner.Selection
	var problems []error
	type loaded struct {
		sel *runner.Selection
		err error
	}
	byGraph := map[string]loaded{}
	for _, name := range names {
		pl := cfg.Pipelines[name]
		l, seen := byGraph[pl.Graph]
		if !seen {
			l.sel, l.err = runner.LoadPipeline(ctx, w.git, mirror, rev, cfg, name, pl, attractor.WithGraphCaps(w.s.o.Caps.Graph))
			byGraph[pl.Graph] = l
		}
		if l.err == nil {
			// A refused image (per pipeline): on the kilroy/config check.
			if _, err := w.s.o.Images.Choose(cfg, name); err != nil {
				l, seen = loaded{err: err}, false
			}
		}
		switch {
		case l.err == nil:
			sel := *l.sel
			sel.Name = name
			sels = append(sels, &sel)
		case seen: // reported with the first pipeline of this graph
		case errors.Is(l.err, runner.ErrUsage):
			problems = append(problems, l.err)
		default:
			return nil, l.err
		}
	}
	if len(problems) > 0 {
		w.log.Info("event: invalid pipelines", "rev", rev, "count", len(problems))
		if err := w.configCheck(ctx, headSHA, "Invalid pipeline", problems); err != nil {
			return nil, err
		}
	}
	return sels, nil
}

// configCheck publishes problems as a failed kilroy/config check with an
// annotation on every line they name.
func (w *eventWork) configCheck(ctx context.Context, headSHA, title string, problems []error) error {
	var summary strings.Builder
	var anns []ConfigAnnotation
	for _, p := range problems {
		fmt.Fprintf(&summary, "- %s\n", strings.TrimPrefix(p.Error(), runner.ErrUsage.Error()+": "))
		anns = append(anns, annotationsOf(p)...)
	}
	summary.WriteString("\nNothing ran for these. Fix the files named above (`kilroy-bot validate` checks pipelines locally) and push again.")
	for i := range anns {
		anns[i].Message = w.s.public(anns[i].Message)
	}
	return w.gh.ConfigCheck(ctx, w.ev.Repo, ConfigCheck{HeadSHA: headSHA, Title: w.s.public(title),
		Summary: w.s.public(summary.String()), Annotations: anns})
}

// annotationsOf turns the positioned problems inside err into
// annotations: configuration errors and pipeline diagnostics.
func annotationsOf(err error) []ConfigAnnotation {
	var out []ConfigAnnotation
	var ip *runner.InvalidPipelineError
	if errors.As(err, &ip) {
		for _, d := range ip.Diagnostics {
			if d.Severity != attractor.SeverityError || d.Line <= 0 {
				continue
			}
			out = append(out, ConfigAnnotation{Path: orFile(d.File, ip.File), Line: d.Line, Column: d.Col, Message: diagMessage(d)})
		}
		return out
	}
	var many policy.ConfigErrors
	if errors.As(err, &many) {
		for _, e := range many {
			out = append(out, configAnnotation(e))
		}
		return out
	}
	var one *policy.ConfigError
	if errors.As(err, &one) {
		out = append(out, configAnnotation(one))
	}
	return out
}

func configAnnotation(e *policy.ConfigError) ConfigAnnotation {
	line := e.Line
	if line <= 0 {
		line = 1 // a problem of the whole file
	}
	return ConfigAnnotation{Path: orFile(e.File, runner.ConfigPath), Line: line, Column: e.Col, Message: e.Msg}
}

func diagMessage(d attractor.Diagnostic) string {
	if d.Fix != "" {
		return d.Message + " (" + d.Fix + ")"
	}
	return d.Message
}

func orFile(f, def string) string {
	if f == "" {
		return def
	}
	return f
}
