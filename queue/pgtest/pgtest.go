//go:build unix

// Package pgtest starts a throwaway PostgreSQL server for tests: the
// queue's own, and the end-to-end tests of replicas sharing one database.
// It skips the test when the server binaries are not installed.
package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// postgresBinDirs are where PostgreSQL server binaries are looked for before
// PATH: Debian and Ubuntu install them outside PATH, one dir per version.
func postgresBinDirs() []string {
	return []string{
		"/usr/lib/postgresql/17/bin",
		"/usr/lib/postgresql/16/bin",
		"/usr/lib/postgresql/15/bin",
	}
}

// findPostgres returns the paths of initdb and pg_ctl, or skips the test.
func findPostgres(t testing.TB) (initdb, pgctl string) {
	t.Helper()
	for _, dir := range postgresBinDirs() {
		i, p := filepath.Join(dir, "initdb"), filepath.Join(dir, "pg_ctl")
		if isExecutable(i) && isExecutable(p) {
			return i, p
		}
	}
	i, err1 := exec.LookPath("initdb")
	p, err2 := exec.LookPath("pg_ctl")
	if err1 != nil || err2 != nil {
		t.Skipf("PostgreSQL server binaries (initdb, pg_ctl) not found in %v or PATH: skipping the Postgres test", postgresBinDirs())
	}
	return i, p
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Start runs a throwaway server in t.TempDir(), listening only on a
// unix socket in that dir, and returns its URL. The server stops in
// t.Cleanup. Postgres refuses to run as root, so as root the server runs as
// the "postgres" user.
func Start(t testing.TB) string {
	t.Helper()
	initdb, pgctl := findPostgres(t)
	dir := t.TempDir()
	cred := postgresCredential(t, dir)
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	if err := os.Mkdir(sock, 0o700); err != nil {
		t.Fatal(err)
	}
	chown(t, cred, sock)
	port := freePort(t)

	runAs(t, cred, initdb, "-D", data, "-U", "kilroy", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
	opts := fmt.Sprintf("-k %s -p %d -h '' -c fsync=off", sock, port)
	runAs(t, cred, pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "start")
	t.Cleanup(func() {
		runAs(t, cred, pgctl, "-D", data, "-m", "immediate", "-w", "stop")
	})
	return fmt.Sprintf("postgres://kilroy@/postgres?host=%s&port=%d&sslmode=disable", sock, port)
}

// postgresCredential returns nil when not root. As root it returns the
// postgres user's credential and opens dir to it.
func postgresCredential(t testing.TB, dir string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Skipf("running as root and no postgres user to run the server as: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	// t.TempDir's parent is private to root; the server only needs to pass.
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	chown(t, cred, dir)
	return cred
}

func chown(t testing.TB, cred *syscall.Credential, path string) {
	t.Helper()
	if cred == nil {
		return
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		t.Fatal(err)
	}
}

func runAs(t testing.TB, cred *syscall.Credential, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out.String())
	}
}

// freePort returns a TCP port nobody listens on; the server uses it only to
// name its socket, so a later collision cannot make the test flaky.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
