module github.com/segkit/segkit/tools

go 1.26.0

tool (
	github.com/segkit/segkit/tools/apicheck
	github.com/segkit/segkit/tools/vulncheck
	golang.org/x/vuln/cmd/govulncheck
)

require (
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/mod v0.42.0
	golang.org/x/tools v0.52.1-0.20261106145633-d407941a339a
)

require (
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/telemetry v0.0.0-20261010193011-f71dc92da45e // indirect
	golang.org/x/vuln v1.9.0 // indirect
)
