// Package apisurface holds the test that pins gpuactor's public API: the exported names and
// method sets of every public package, so that plumbing cannot silently become public again.
package apisurface
