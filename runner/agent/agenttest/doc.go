// Package agenttest is a fake model server for tests of coding agents: a
// Go HTTP server on 127.0.0.1 that answers the Anthropic Messages API, the
// OpenAI Responses and Chat Completions APIs and the Gemini API, streaming
// (server-sent events) and not, from one script of turns.
//
// Model. A Server holds a list of Turns. Every model call that offers tools
// (an agent's main loop) takes the next turn; the last turn repeats, so a
// script ending in a fault fails forever and one ending in a final text
// ends every further call. A turn is either an answer (text and tool calls,
// rendered in the protocol the request came in) or a Fault: an HTTP error
// status with the protocol's error body, or a response cut off mid-way
// (mid-stream for a streaming call). Calls that offer no tools (a CLI's
// title or next-speaker side calls) get SideText without taking a turn;
// token counting and model listing get a plausible answer. Every request is
// recorded, so tests can count calls and read what a client sent (its key
// header among them).
package agenttest
