package toolsafetest

import (
	"fmt"
	"strings"
)

// MRKLAction returns what a model answers, in the format of langchaingo's
// MRKL agent (agents.NewOneShotAgent), when it thinks thought and calls
// tool with input:
//
//	Thought: {thought}
//	Action: {tool}
//	Action Input: {input}
//
// with nothing after the input: the agent takes all the rest of the text
// as the input, trimmed of spaces and newlines. Give the texts to a scripted
// model such as langchaingo's llms/fake.NewFakeLLM, one per turn.
//
// It panics when the agent would read the text as something else: when
// tool is empty or holds a newline, when thought or tool holds "Action:" or
// "Action Input:", or when any part holds a phrase that makes the agent
// finish ("Final Answer:", "the answer is:", ... in any case).
func MRKLAction(thought, tool, input string) string {
	switch {
	case strings.TrimSpace(tool) == "" || strings.ContainsAny(tool, "\r\n"):
		panic(fmt.Sprintf("toolsafetest: MRKLAction: the tool name %q is empty or spans lines", tool))
	case holdsAction(thought) || holdsAction(tool):
		panic(fmt.Sprintf("toolsafetest: MRKLAction: %q or %q holds \"Action:\": the agent would read another action", thought, tool))
	case holdsFinal(thought) || holdsFinal(tool) || holdsFinal(input):
		panic(fmt.Sprintf("toolsafetest: MRKLAction: the action on %s holds a final-answer phrase: the agent would finish instead", tool))
	}
	return "Thought: " + thought + "\nAction: " + tool + "\nAction Input: " + input
}

// MRKLAnswer returns what a model answers, in the format of langchaingo's
// MRKL agent, when it thinks thought and ends the run with answer:
//
//	Thought: {thought}
//	Final Answer: {answer}
//
// The agent's output is answer, trimmed of spaces and newlines. It panics
// when thought or answer holds "Final Answer:", since the agent would then
// answer with only a part of the text.
func MRKLAnswer(thought, answer string) string {
	if strings.Contains(thought, mrklFinal) || strings.Contains(answer, mrklFinal) {
		panic(fmt.Sprintf("toolsafetest: MRKLAnswer: %q or %q holds %q: the agent would answer with a part of it", thought, answer, mrklFinal))
	}
	return "Thought: " + thought + "\n" + mrklFinal + " " + answer
}

// mrklFinal is the marker of a final answer in langchaingo's MRKL agent.
const mrklFinal = "Final Answer:"

// finalPhrases are the phrases, in lower case, after which langchaingo's
// MRKL agent takes the rest of the text as the final answer (mrkl.go,
// parseOutput).
var finalPhrases = []string{"final answer:", "final answer :", "the final answer is:", "the answer is:"}

func holdsFinal(s string) bool {
	l := strings.ToLower(s)
	for _, p := range finalPhrases {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

func holdsAction(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "action:") || strings.Contains(l, "action input:")
}
