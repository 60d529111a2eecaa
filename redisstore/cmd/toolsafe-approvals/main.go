// Command toolsafe-approvals lists and decides the calls that wait for
// approval in a fleet's Redis, and prints the audit trail: the approvals
// inbox for people who prefer a terminal.
//
//	toolsafe-approvals [flags] list
//	toolsafe-approvals [flags] approve [-comment TEXT] ID
//	toolsafe-approvals [flags] deny [-comment TEXT] ID
//	toolsafe-approvals [flags] audit [-n N]
//
// The flags: -redis ADDR (default $REDIS_ADDR, else 127.0.0.1:6379;
// several, comma-separated, are nodes of a Redis Cluster),
// -prefix (the Store's key prefix, default "toolsafe"), -as USER (who
// decides, for the audit trail; default the login name), -timeout (each
// Redis operation, default 2s), -old-keys (also what a fleet of a version
// before the cluster keys kept: redisstore.Grants.ReadOldKeys). An ID is one list printed: it names the
// request exactly as shown, so approve covers nothing else, and a request
// answered already (by anyone) or asked again with other details is
// refused. Text from inputs and comments is printed with control
// characters escaped.
//
// Before each request, and each record of the audit trail, it warns of
// the characters it shows as codes and of values that mix lookalike
// scripts, as the inbox's pages do.
//
// The exit status is 0 on success, 1 when the request no longer waits as
// listed, 2 on a usage error, 3 when Redis is unavailable, 4 when the
// store refused the answer or failed otherwise (too many decisions wait
// for the request's tool and input; an entry it cannot read). It lives in
// redisstore's module, which may require go-redis; the core's toolsafe
// command does not. Add it to your module as a tool (go install ...@version
// refuses a nested module, whose go.mod has replace directives):
//
//	go get -tool github.com/toolsafe/toolsafe/redisstore/cmd/toolsafe-approvals@latest
//	go tool toolsafe-approvals list
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/toolsafe/toolsafe/approval"
	"github.com/toolsafe/toolsafe/redisstore"
)

// The exit statuses.
const (
	exitOK         = 0
	exitNotPending = 1
	exitUsage      = 2
	exitStore      = 3
	exitRefused    = 4
)

const usage = `toolsafe-approvals lists and decides the calls waiting for approval in Redis.

Usage:
  toolsafe-approvals [flags] list                          what waits, oldest first
  toolsafe-approvals [flags] approve [-comment TEXT] ID    approve the request ID (from list)
  toolsafe-approvals [flags] deny [-comment TEXT] ID       deny it
  toolsafe-approvals [flags] audit [-n N]                  the N newest decisions (default 20; 0: all)

Flags:
  -redis ADDR     the Redis (default $REDIS_ADDR, else 127.0.0.1:6379);
                  several, comma-separated: nodes of a Redis Cluster
  -prefix P       the Store's key prefix (default toolsafe)
  -as USER        who decides, for the audit trail (default the login name)
  -timeout D      each Redis operation (default 2s)
  -old-keys       also list and answer what a fleet of a version before the
                  cluster keys kept (redisstore.Grants.ReadOldKeys)

Exit status: 0 on success, 1 when the request no longer waits as listed, 2
on a usage error, 3 when Redis is unavailable, 4 when the store refused the
answer or failed otherwise.
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	addr, prefix, as string
	timeout          time.Duration
	oldKeys          bool
}

// run runs the command with args (without the program name) and returns
// the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("toolsafe-approvals", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.addr, "redis", envOr("REDIS_ADDR", "127.0.0.1:6379"), "")
	fs.StringVar(&o.prefix, "prefix", "toolsafe", "")
	fs.StringVar(&o.as, "as", loginName(), "")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Second, "")
	fs.BoolVar(&o.oldKeys, "old-keys", false, "")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "toolsafe-approvals:", err)
		}
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	switch cmd {
	case "list", "approve", "deny", "audit":
	case "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "toolsafe-approvals: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
	client := newClient(o.addr)
	defer client.Close()
	store, err := redisstore.New(client, redisstore.WithPrefix(o.prefix), redisstore.WithTimeout(o.timeout))
	if err != nil {
		fmt.Fprintln(stderr, "toolsafe-approvals:", err)
		return exitUsage
	}
	defer store.Close()
	g := store.Grants()
	g.ReadOldKeys = o.oldKeys
	switch cmd {
	case "list":
		return list(ctx, g, stdout, stderr)
	case "audit":
		return audit(ctx, g, rest, stdout, stderr)
	case "approve":
		return answer(ctx, g, approval.Approved, o.as, rest, stdout, stderr)
	}
	return answer(ctx, g, approval.Denied, o.as, rest, stdout, stderr)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func loginName() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

// failed prints err and returns its exit status.
func failed(stderr io.Writer, err error) int {
	switch {
	case errors.Is(err, approval.ErrNotPending):
		fmt.Fprintln(stderr, "toolsafe-approvals: not recorded: the request no longer waits as listed (answered already, expired, or asked again with other details); list again")
		return exitNotPending
	case errors.Is(err, redisstore.ErrUnavailable):
		fmt.Fprintln(stderr, "toolsafe-approvals: Redis is unavailable; an answer is recorded whole or not at all: list again when it is back")
		return exitStore
	case errors.Is(err, approval.ErrTooManyDecisions):
		fmt.Fprintf(stderr, "toolsafe-approvals: not recorded: %d approvals and denials of this tool with this input already wait to be used by their calls, so Redis refused one more; they are used as their runs resume, or expire: try again once some are, or revoke those no longer wanted. The request still waits.\n", redisstore.DefaultMaxDecisions)
		return exitRefused
	}
	fmt.Fprintln(stderr, "toolsafe-approvals: the store failed:", clean(err.Error()))
	return exitRefused
}
