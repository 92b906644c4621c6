// Package group is the pure core of the consumer-group coordinator (classic
// protocol). The manual is filled in below as the package grows.
package group
