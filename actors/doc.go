// Package actors holds all broker state and behaviour.
package actors
