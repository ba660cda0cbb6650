package main

import "github.com/kilroy-bot/kilroy-bot/ghserver"

// githubAdapter is the GitHub side of serve's server: the GitHub of each
// installation and the check reporter of each run, on w's App, redactor
// and metrics, linking commits on GitHub's web root web and runs to their
// pages.
func githubAdapter(w wired, web string) (*ghserver.Adapter, error) {
	return ghserver.New(ghserver.Options{
		App: w.App, Redactor: w.Redactor, Metrics: w.Metrics, Logger: w.Logger,
		DataDir: w.Config.DataDir, WebURL: web, RunURL: w.RunURL,
		MaxAnnotations: w.Config.Policy.MaxAnnotations, Banner: insecureBanner(w.Config),
		Throttle: w.Config.ProgressEvery,
	})
}
