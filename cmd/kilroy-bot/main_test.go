package main

import (
	"os"
	"testing"
)

// beKilroyBot, set in a child's environment, makes the test binary run as
// the kilroy-bot command itself, so tests can start it as a real process
// (and kill it).
const beKilroyBot = "KILROY_BOT_TEST_BE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beKilroyBot) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}
