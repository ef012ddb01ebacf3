package version

// Version is the release or commit this binary was built from; "dev" when built without ldflags.
var Version = "dev"
