package allinone_test

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// testLogger keeps test output quiet unless VERBOSE_TEST_LOGS is set.
func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("VERBOSE_TEST_LOGS") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
