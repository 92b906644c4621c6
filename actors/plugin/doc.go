// Package plugin will hold the public API through which users register
// their own supervised actors with the broker. Nothing is here yet.
package plugin
