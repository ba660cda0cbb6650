package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

const healthcheckUsage = `usage: kilroy-bot healthcheck [--url URL]

Asks a running serve whether it is alive (GET /healthz) and exits 0 when
it answers 200, 1 otherwise. It is the container image's HEALTHCHECK, which
has no curl. Without --url it asks 127.0.0.1 on the port of --listen /
KILROY_LISTEN (default :8080).

Flags:
  --url URL   the address to ask (default http://127.0.0.1:PORT/healthz)
`

// runHealthcheck implements `kilroy-bot healthcheck`.
func runHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	u := fs.String("url", "", "")
	if code, ok := parseFlags(fs, args, "healthcheck", healthcheckUsage, stdout, stderr); !ok {
		return code
	}
	if *u == "" {
		_, port, err := net.SplitHostPort(cmp.Or(getenv(setListen.env), setListen.def))
		if err != nil {
			fmt.Fprintf(stderr, "kilroy-bot healthcheck: %s: %v\n", setListen.env, err)
			return 2
		}
		*u = "http://" + net.JoinHostPort("127.0.0.1", port) + "/healthz"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *u, nil)
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot healthcheck: %v\n", err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "kilroy-bot healthcheck: %v\n", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "kilroy-bot healthcheck: %s answered %s\n", *u, resp.Status)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s\n", *u, resp.Status)
	return 0
}
