// Command inbox shows toolsafe's approvals inbox: a billing agent's refund
// waits for a person, who approves or denies it in a web page served on
// 127.0.0.1; the run then resumes, and the refund reaches the upstream
// once.
//
//	go run ./examples/inbox            # then open the login link it prints
//	go run ./examples/inbox -addr 127.0.0.1:8080 -exit
//
// The page lists what waits (tool, input, reason, run, call, attempt, age)
// and updates itself; a request's page has Approve and Deny with a
// comment; the list shows the audit trail. The link printed signs you in
// (a session cookie): the inbox serves no one it cannot identify. With
// -exit the program ends when the run does; otherwise the inbox stays up,
// showing the audit trail, until Ctrl-C. The model is scripted
// (langchaingo's llms/fake), so the demo runs offline.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/toolsafe/toolsafe/examples/internal/inboxdemo"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "where to serve the inbox")
	exit := flag.Bool("exit", false, "end when the run ends")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := demo(ctx, *addr, *exit, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "inbox:", err)
		os.Exit(1)
	}
}

func demo(ctx context.Context, addr string, exit bool, w io.Writer) error {
	d, err := inboxdemo.Start(addr, w)
	if err != nil {
		return err
	}
	defer d.Close()
	fmt.Fprintf(w, "toolsafe approvals inbox demo\nquestion: %s\nopen %s to sign in to the inbox as %s\n", inboxdemo.Question, d.LoginURL, inboxdemo.User)
	select {
	case <-d.Done():
	case <-ctx.Done():
		return nil
	}
	if _, err := d.Outcome(); err != nil {
		return err
	}
	if exit {
		return nil
	}
	fmt.Fprintf(w, "the inbox stays up to show the audit trail: %s (Ctrl-C to stop)\n", d.URL)
	<-ctx.Done()
	return nil
}
