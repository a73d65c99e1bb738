package proc

// WatchdogCommand is the hidden subcommand that runs the watchdog
// (agentls re-executes itself with it; see NewWatchdog).
const WatchdogCommand = "__watchdog"

// WatchdogEnv is set, to a token unique to one agentls process, in that
// process's environment when its Watchdog is made, so every process it
// starts afterwards (commands, their daemons, rg, upstream servers)
// inherits it and the watchdog can find them once agentls is gone.
const WatchdogEnv = "AGENTLS_WATCHDOG"
