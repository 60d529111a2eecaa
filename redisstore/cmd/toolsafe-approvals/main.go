// Command toolsafe-approvals lists and decides the calls that wait for
// approval in a fleet's Redis, and prints the audit trail: the approvals
// inbox for people who prefer a terminal.
//
//	toolsafe-approvals [flags] list [-tool NAME] [-run ID]
//	toolsafe-approvals [flags] approve [-comment TEXT] [-input JSON] [-resend] ID
//	toolsafe-approvals [flags] deny [-comment TEXT] [-message TEXT] ID
//	toolsafe-approvals [flags] audit [-n N]
//
// The flags: -redis ADDR (default $REDIS_ADDR, else 127.0.0.1:6379;
// several, comma-separated, are nodes of a Redis Cluster, and so is one
// address whose Redis says it is a cluster node),
// -prefix (the Store's key prefix, default "toolsafe"), -as USER (who
// decides, for the audit trail; default the login name), -timeout (each
// Redis operation, default 2s), -old-keys (also what a fleet of a version
// before the cluster keys kept: redisstore.Grants.ReadOldKeys). An ID is one list printed: it names the
// request exactly as shown, so approve covers nothing else, and a request
// answered already (by anyone) or asked again with other details is
// refused. Text from inputs and comments is printed with control
// characters escaped.
//
// A tool with a quorum (redisstore.Grants.Quorum on the agent's replicas:
// it travels with the request) lists its votes, and approve records one
// vote; the call runs once that many distinct people approved. approve
// -input JSON approves the call with the arguments changed to JSON (an
// object; the call runs with it, and the model is told what changed);
// the command cannot check it against the tool's schema, as the inbox's
// WithInputCheck does, so give exactly the arguments the tool takes. deny
// -message TEXT gives the model a person's message (at most 500
// characters). Approving a destructive call whose earlier attempt may
// have been applied needs -resend: approving sends it again; such a call
// takes no -input, since its next attempt goes under the same idempotency
// key as the one that may have been applied.
//
// list ends by saying how many requests the full list dropped, and since
// when, and how many wait unlisted, when any did; audit lists, beside the
// decisions, each refusal of a person the inbox would not let decide (see
// inbox.WithAuthorize) and each request dropped from a full list.
//
// Before each request, and each record of the audit trail, it warns of
// the characters it shows as codes and of values that mix lookalike
// scripts, as the inbox's pages do.
//
// When Redis cannot be reached it says so in one line, with the address
// and what to do, and exits 3; the log lines of go-redis and of the
// Store's outage handling (meant for a long-running agent) are not
// printed.
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
	"log/slog"
	"net"
	"os"
	"os/user"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

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
  toolsafe-approvals [flags] list [-tool NAME] [-run ID]   what waits, oldest first
  toolsafe-approvals [flags] approve [-comment TEXT] [-input JSON] [-resend] ID
                                approve the request ID (from list); -input: with the
                                arguments changed to JSON; -resend: an earlier attempt
                                of this destructive call may have been applied, send it
                                again
  toolsafe-approvals [flags] deny [-comment TEXT] [-message TEXT] ID
                                deny it; -message: what the model is told
  toolsafe-approvals [flags] audit [-n N]                  the N newest decisions, refusals and
                                requests dropped from a full list (default 20; 0: all)

Flags:
  -redis ADDR     the Redis (default $REDIS_ADDR, else 127.0.0.1:6379);
                  several, comma-separated: nodes of a Redis Cluster
                  (one node's address is enough: it is found to be one)
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
	// go-redis logs a failed dial to stderr itself ("redis: ... pool.go:
	// ... failed to dial"); the command says what failed, in its words.
	redis.SetLogger(silent{})
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// silent is a go-redis logger that prints nothing.
type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}

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
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	err := client.Ping(pctx).Err()
	cancel()
	if err != nil {
		fmt.Fprintln(stderr, unreachable(o, err))
		return exitStore
	}
	// One address of a Redis Cluster's node: a client of that node alone
	// would be refused at the first key on another node, so talk to the
	// cluster through it.
	pctx, cancel = context.WithTimeout(ctx, o.timeout)
	cluster := clusterNode(pctx, client)
	cancel()
	if cluster {
		client = redis.NewClusterClient(redisstore.ClusterOptions(strings.TrimSpace(o.addr)))
		defer client.Close()
	}
	// The Store's outage WARN is for an agent that keeps running; here the
	// command says what failed itself (failed).
	store, err := redisstore.New(client, redisstore.WithPrefix(o.prefix), redisstore.WithTimeout(o.timeout),
		redisstore.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		fmt.Fprintln(stderr, "toolsafe-approvals:", err)
		return exitUsage
	}
	defer store.Close()
	g := store.Grants()
	g.ReadOldKeys = o.oldKeys
	c := &cli{g: g, addr: o.addr, stdout: stdout, stderr: stderr}
	switch cmd {
	case "list":
		return c.list(ctx, rest)
	case "audit":
		return c.audit(ctx, rest)
	case "approve":
		return c.answer(ctx, approval.Approved, o.as, rest)
	}
	return c.answer(ctx, approval.Denied, o.as, rest)
}

// cli is one run of a command on the Grants of the Redis at addr.
type cli struct {
	g              *redisstore.Grants
	addr           string
	stdout, stderr io.Writer
}

// unreachable is the line that says Redis at o.addr did not answer a PING,
// why, and what to do.
func unreachable(o options, err error) string {
	var dns *net.DNSError
	var ne net.Error
	var rerr redis.Error
	why := ""
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		why = "connection refused: nothing listens there"
	case errors.As(err, &dns):
		why = "no such host"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		why = fmt.Sprintf("no answer within %s, the -timeout", o.timeout)
	case errors.As(err, &rerr):
		return fmt.Sprintf("toolsafe-approvals: Redis at %s refused the command: %s", o.addr, clean(rerr.Error()))
	default:
		return fmt.Sprintf("toolsafe-approvals: what answers at %s is not a Redis that works (%s): give the fleet's Redis with -redis ADDR or REDIS_ADDR", o.addr, clean(err.Error()))
	}
	return fmt.Sprintf("toolsafe-approvals: Redis at %s cannot be reached (%s): start it, or give the fleet's Redis with -redis ADDR or REDIS_ADDR", o.addr, why)
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

// failed prints err and returns its exit status. answering says whether
// err is the answer's, which Redis may have recorded before it stopped
// answering.
func (c *cli) failed(err error, answering bool) int {
	stderr := c.stderr
	switch {
	case errors.Is(err, approval.ErrNotPending):
		fmt.Fprintln(stderr, "toolsafe-approvals: not recorded: the request no longer waits as listed (answered already, expired, or asked again with other details); list again")
		return exitNotPending
	case errors.Is(err, redisstore.ErrUnavailable) && answering:
		fmt.Fprintf(stderr, "toolsafe-approvals: Redis at %s stopped answering while the answer was sent, so it may or may not be recorded: when Redis is back, run list; if the request is still there, answer it again\n", c.addr)
		return exitStore
	case errors.Is(err, redisstore.ErrUnavailable):
		fmt.Fprintf(stderr, "toolsafe-approvals: Redis at %s stopped answering: run the command again when it is back\n", c.addr)
		return exitStore
	case errors.Is(err, approval.ErrAlreadyVoted):
		fmt.Fprintln(stderr, "toolsafe-approvals: not recorded: you approved this request already; it waits for another person's approval (one person is one vote)")
		return exitRefused
	case errors.Is(err, approval.ErrTooManyDecisions):
		fmt.Fprintf(stderr, "toolsafe-approvals: not recorded: %d approvals and denials of this tool with this input already wait to be used by their calls, so Redis refused one more; they are used as their runs resume, or expire: try again once some are, or revoke those no longer wanted. The request still waits.\n", redisstore.DefaultMaxDecisions)
		return exitRefused
	}
	fmt.Fprintln(stderr, "toolsafe-approvals: the store failed:", clean(err.Error()))
	return exitRefused
}
