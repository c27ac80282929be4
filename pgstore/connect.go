package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var (
	// ErrRefused: nothing accepts connections at the server's address (no
	// server runs there, or a firewall refuses).
	ErrRefused = errors.New("pgstore: connection refused")
	// ErrNoHost: the server's host name does not resolve.
	ErrNoHost = errors.New("pgstore: host not found")
	// ErrNoAnswer: the server did not answer within the connect timeout.
	ErrNoAnswer = errors.New("pgstore: no answer")
	// ErrUnescaped: the URL has an '@' after its host, most likely a
	// password holding '/', '?' or '@' not percent-encoded, which would be
	// taken for the database's name.
	ErrUnescaped = errors.New("pgstore: an '@' after the host in the URL: percent-encode the password ('/' as %2F, '?' as %3F, '@' as %40)")
)

// ConnectError is a database server that could not be reached, or that
// turned arbor away before the store was open. It names the address tried
// and one cause, once: the driver tries an address twice (with TLS, then
// without) and reports both.
type ConnectError struct {
	Store string // the connection string, its password masked
	Addr  string // host:port, or the Unix socket's path
	// Err is ErrRefused, ErrNoHost, ErrNoAnswer, the server's own error
	// (*pgconn.PgError: a wrong password, a database that does not exist),
	// or another error from the driver, its text without connection strings.
	Err error
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("store %s: connect to %s: %v", e.Store, e.Addr, e.Err)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// connectError turns the driver's error for a connection that failed into a
// ConnectError, or returns nil when err is not one.
func connectError(name string, cfg *pgx.ConnConfig, err error) *ConnectError {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return nil
	}
	e := &ConnectError{Store: name, Addr: address(cfg.Host, cfg.Port)}
	var pg *pgconn.PgError
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &pg):
		e.Err = pg
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) && strings.HasPrefix(cfg.Host, "/"):
		e.Err = ErrRefused
	case errors.As(err, &dns):
		e.Err = ErrNoHost
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		e.Err = ErrNoAnswer
	default:
		e.Err = errors.New(attempts(ce))
	}
	return e
}

// address is where the driver connects for host and port.
func address(host string, port uint16) string {
	if strings.HasPrefix(host, "/") {
		return filepath.Join(host, ".s.PGSQL."+strconv.Itoa(int(port)))
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// attempts is the driver's reason for each attempt, each different one once,
// without the address (the ConnectError names it) or the user and database
// the driver puts first.
func attempts(ce *pgconn.ConnectError) string {
	inner := errors.Unwrap(ce)
	var errs []error
	if j, ok := inner.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if inner != nil {
		errs = []error{inner}
	}
	var seen []string
	for _, err := range errs {
		msg := oneLine(err)
		// "host:port (host): why"
		if _, why, ok := strings.Cut(msg, "): "); ok {
			msg = why
		}
		msg = redactText(msg)
		if !slices.Contains(seen, msg) {
			seen = append(seen, msg)
		}
	}
	if len(seen) == 0 {
		return "the connection failed"
	}
	return strings.Join(seen, "; ")
}
