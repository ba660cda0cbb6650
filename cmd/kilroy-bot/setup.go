package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kilroy-bot/kilroy-bot/appsetup"
	"github.com/kilroy-bot/kilroy-bot/ghapp"
)

const setupUsage = `usage: kilroy-bot setup --public-url URL [--org ORG] [--name NAME] [--github-url URL] [--data-dir DIR] [--listen ADDR]

Registers kilroy-bot as a GitHub App from a manifest (exactly the
permissions and events the bot needs, webhooks to URL/webhooks/github) and
stores the App's id, private key and webhook secret in DIR/github-app/,
readable by their owner only, with the GitHub URL, which serve then uses
unless given another. It serves one page on this machine: open it in
a browser signed in to GitHub, press the button, confirm on GitHub, and
GitHub sends the browser back here. It then prints the install link and the
serve command to run.

Flags:
  --public-url URL   the public https:// address the bot will serve on (or KILROY_PUBLIC_URL; required)
  --org ORG          register the App under this organisation (default: your own account)
  --name NAME        the App's name, unique on GitHub; you may change it there (default: kilroy-bot-ORG)
  --github-url URL   GitHub's REST API root (or KILROY_GITHUB_URL; default https://api.github.com/;
                     GitHub Enterprise: https://HOST/api/v3/)
  --data-dir DIR     where serve keeps its data (or KILROY_DATA_DIR; default ./kilroy-data)
  --listen ADDR      the setup page's loopback address (default 127.0.0.1:0, any free port;
                     over SSH, pick a port and forward it)

Exit status: 0 the App is registered and stored, 1 it could not be, 2 usage
(also when DIR/github-app/ already holds an App).
`

// setupWait bounds the whole setup: GitHub honours a manifest code for an
// hour, so a setup page left open longer cannot succeed anyway.
const setupWait = time.Hour

// runSetup implements `kilroy-bot setup`.
func runSetup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("setup", flag.ContinueOnError)
	public := fs.String("public-url", getenv(setPublicURL.env), "")
	org := fs.String("org", "", "")
	name := fs.String("name", "", "")
	api := fs.String("github-url", cmp.Or(getenv(setGitHubURL.env), setGitHubURL.def), "")
	data := fs.String("data-dir", cmp.Or(getenv(setDataDir.env), setDataDir.def), "")
	listen := fs.String("listen", "127.0.0.1:0", "")
	if code, ok := parseFlags(fs, args, "setup", setupUsage, stdout, stderr); !ok {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "kilroy-bot setup: "+format+"\n\n%s", append(a, setupUsage)...)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q", fs.Arg(0))
	case *public == "":
		return usageErr("--public-url is required: the https:// address GitHub will send webhooks to")
	case !loopback(*listen):
		return usageErr("--listen %s: the setup page listens on this machine only (127.0.0.1 or [::1])", *listen)
	}
	dataDir, err := filepath.Abs(*data)
	if err != nil {
		return usageErr("--data-dir: %v", err)
	}
	cfg := appsetup.Config{WebURL: webURL(*api), APIURL: *api, Org: *org, Name: cmp.Or(*name, defaultAppName(*org)),
		PublicURL: strings.TrimSuffix(*public, "/"), Files: appsetup.FilesIn(dataDir),
		HTTPClient: &http.Client{Timeout: 30 * time.Second}}
	return serveSetup(ctx, cfg, *listen, dataDir, stdout, stderr)
}

// serveSetup serves the setup page until the App is stored or ctx ends.
func serveSetup(ctx context.Context, cfg appsetup.Config, listen, dataDir string, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot setup: listen on %s: %v\n", listen, err)
		return 1
	}
	base := "http://" + ln.Addr().String()
	flow, err := appsetup.New(cfg, base)
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "kilroy-bot setup: %v\n", err)
		return 2
	}
	srv := &http.Server{Handler: flow.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	fmt.Fprintf(stdout, "Open %s/ in a browser signed in to %s and press the button.\n", base, cfg.WebURL)
	ctx, cancel := context.WithTimeout(ctx, setupWait)
	defer cancel()
	var res appsetup.Result
	select {
	case res = <-flow.Done():
	case <-ctx.Done():
	}
	// Shutdown lets the callback finish its page before the server goes.
	stop, cancelStop := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelStop()
	srv.Shutdown(stop)
	if res.AppID == 0 {
		fmt.Fprintf(stderr, "kilroy-bot setup: stopped before GitHub sent the browser back: %v\n", context.Cause(ctx))
		return 1
	}
	// serve reads it when neither --github-url nor KILROY_GITHUB_URL is
	// set, so a GitHub Enterprise App is not sent to github.com.
	if err := os.WriteFile(githubURLFile(dataDir), []byte(cfg.APIURL+"\n"), 0o600); err != nil {
		fmt.Fprintf(stderr, "kilroy-bot setup: the App is stored, but not the GitHub URL: %v; pass --github-url %s to serve\n", pathErr(err), cfg.APIURL)
	}
	printSetupDone(stdout, cfg, res, dataDir)
	return 0
}

func printSetupDone(w io.Writer, cfg appsetup.Config, res appsetup.Result, dataDir string) {
	f := cfg.Files
	cmdline := []string{"kilroy-bot", "serve", "--data-dir", dataDir, "--app-id", strconv.FormatInt(res.AppID, 10),
		"--private-key-file", f.PrivateKey(), "--webhook-secret-file", f.WebhookSecret(), "--public-url", cfg.PublicURL}
	if strings.TrimSuffix(cfg.APIURL, "/") != strings.TrimSuffix(ghapp.DefaultBaseURL, "/") {
		cmdline = append(cmdline, "--github-url", cfg.APIURL)
	}
	for i, a := range cmdline {
		cmdline[i] = shellQuote(a)
	}
	fmt.Fprintf(w, `
Registered the GitHub App %s (id %d).
Stored its id, private key, webhook secret and GitHub URL in %s (mode 0600).

Install it on your repositories:
  %s

Then start the bot (add --listen and --config as needed; serve -h lists the settings):
  %s
`, res.Slug, res.AppID, f.Dir, res.InstallURL, strings.Join(cmdline, " "))
}

// defaultAppName is a name likely to be free: App names are unique across
// all of GitHub.
func defaultAppName(org string) string {
	if org == "" {
		return "kilroy-bot"
	}
	return "kilroy-bot-" + org
}

// loopback says whether addr is host:port on a loopback address.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=@%+,-]+$`)

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
