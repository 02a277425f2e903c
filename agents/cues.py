"""Whether a line the safety probe reads as an emergency says a word an emergency is
told with, so the screen knows how sure to sound.

The probe (agents/risk.py) reads meaning from a small model's hidden states, and it
reads any symptom told vividly as an emergency. On whole calls written by a helper who
saw no code (benchmarks/data/calls_blind3.yaml), "my head's been pounding like a drum",
"this blocked nose is strangling me" and "I've a cold sore the size of a volcano" each
heard "This sounds like an emergency. Please call 911 now", and every product asked
for after it heard the number again.

Taking such readings back costs emergencies: gated on these words, the probe missed 16
of the 185 held-out emergencies (benchmarks/safety_blind.py), and on self-harm, told in
far more ways, 92 of 200. So nothing is taken back. A probe's emergency without such a
word is still answered with the number, in words that say "if" (`safety.check`); then
a request for a product named, or a question whether the shop has it or what it costs
that says nothing more, is served, and anything else hears the emergency's words
(agents/screen.py). The words may be many: one too many costs an ordinary
caller the old answer, one too few lets an emergency's next request be served.

The words were written from what a pharmacy's emergency guidance lists, not from the
held-out sets. What the safety phrases catch (agents/safety.py) never comes here.
"""

from __future__ import annotations

import re

from agents.safety import normalise

# Ordinary ills in callers' figures of speech, taken out before the words are looked
# for: "I'm dying to see the back of this cold" is not "he's dying".
_IDIOMS = re.compile(
    r"\b(?:"
    r"(?:be|is|was|being|'?ll be|will be|gonna be|going to be) the (?:death|end) of (?:me|him|her|us)|"
    r"death of me|at death'?s door|death warmed up|like death|"
    r"dying (?:to|for|of embarrassment|(?:with|of) (?:a|this|the|my) (?:cold|flu|cough|hay ?fever|heat))|"
    r"to die for|bored to death|scared to death|sick to death|worried sick|"
    r"(?:could|would|'d) (?:kill|murder) (?:for )?(?:a|an|some|for)\b|"
    r"(?:would|'?d|will|'?ll|gonna|going to) kill (?:me|you|him|her) (?:if|when|for)\b|"
    r"would kill you|kill(?:s|ing)? me|murder(?:ing|s)? (?:me|my)|blue murder|"
    r"(?:been|is|it'?s|was) murder|"
    r"doing (?:me|my \w+) in|doing my head in|done me in|"
    # Of a cold or a pill, never of a blow: "it knocked him out" keeps its words.
    r"knock(?:s|ing)? me out|knock(?:s|ed|ing)? (?:it|this|that) on the head|"
    r"dead (?:tired|beat|on my feet|against|set)|"
    r"sick as a (?:dog|parrot)|sick and tired|the end of my tether|finish(?:es)? me off|"
    r"(?:got|been|keep getting|kept getting|keeps getting|was) cut off|"
    r"poisoned with (?:a|this|the) (?:cold|flu)|"
    r"(?:can'?t|cannot|could not|couldn'?t) get out(?: of the house)?|"
    r"gasping for (?:a|an|some) \w+|eaten alive|ate (?:me|us|him|her|my \w+) alive|fit to drop|keep fit|fit as a fiddle|"
    r"like (?:i'?ve |i )?(?:swallowed|swallowing|gargling) (?:a |an |some )?"
    r"(?:razor ?blades?|broken glass|glass|sandpaper|knives|nails|blowtorch|fire|a hedgehog)"
    r")"
)

# A word an emergency is told with, from the signs a pharmacy is told to send to 911.
_EMERGENCY = re.compile(
    r"\b(?:"
    # breathing and colour
    r"breath\w*|wheez\w*|chok\w*|gasping|air|asthma\w*|inhaler|blue|grey|gray|purple|pale|"
    r"clammy|sweat\w*|"
    # the heart and the chest
    r"chest|heart|pulse|palpitat\w*|crushing|attack|tingl\w*|"
    # waking, fainting, fits
    r"unconscious|unresponsive|faint\w*|collaps\w*|passed out|pass(?:es|ing)? out|"
    r"wake|waking|woke|awake|come round|coming round|respond\w*|not moving|slumped|floppy|limp|"
    r"knocked (?:him|her|them|himself|herself|myself) out|"
    r"out cold|fit|fitting|seizure\w*|convuls\w*|shaking all over|jerking|foaming|"
    # a stroke
    r"stroke|dropped|droop\w*|slurr\w*|jumbled|numb\w*|paralys\w*|confus\w*|"
    r"not making sense|can'?t (?:speak|talk|lift|move|feel|see|stand)|lost (?:his|her|my) (?:sight|vision)|"
    # allergy
    r"swell\w*|swollen|ballooning|puffed up|anaphyla\w*|epipen|allergic reaction|throat'?s? closing|"
    r"closing up|hives|dizz\w*|tongue|lips|"
    # bleeding
    r"blood\w*|bleed\w*|haemorrhag\w*|hemorrhag\w*|spurting|gash\w*|deep cut|"
    r"cut (?:off|open) (?:the|his|her|my|their|a)|"
    # something swallowed
    r"overdos\w*|poison\w*|swallowed|ate|eaten|drank|drunk|chewed|got into|"
    r"took (?:the|a|all|loads|lots|too)|taken (?:the|a|all|loads|lots|too)|too many|the whole|"
    # Tablets had, said any way: "I popped a load of my sleeping pills", "she necked a
    # packet of my antidepressants", "my toddler's had some of my tablets".
    r"(?:had|has|took|taken|necked|popped|downed|swallowed|ate|eaten|chewed|drank|drunk|"
    r"got into)\b(?:\W+\w+){0,5}?\W+(?:pills?|tablets?|capsules?|meds|medicines?|"
    r"medication|antidepressants?|painkillers?|sleeping|paracetamol|ibuprofen|aspirin|"
    r"bottle|packet|box|load|lot)|"
    r"bleach|battery|batteries|dishwasher|detergent|"
    # falls, blows, burns
    r"fell|fallen|fall|hit (?:his|her|my|their|the) head|banged|head injury|broken|"
    r"scald\w*|kettle|boiling|blister\w*|badly|severe\w*|serious\w*|"
    # pain that is sudden or the worst
    r"worst (?:headache|pain)|thunderclap|sudden\w*|stiff neck|doesn'?t fade|won'?t fade|"
    r"rash|meningitis|"
    # the words of an emergency itself
    r"emergency|ambulance|paramedic\w*|911|999|112|a and e|dying|die|died|dead|"
    r"(?:seriously|really|very|awfully|terribly) (?:ill|unwell|poorly)|not right"
    r")\b"
)


def plain(said: str) -> str:
    """The words, with the figures of speech for ordinary ills taken out."""
    return " ".join(_IDIOMS.sub(" ", normalise(said)).split())


def tells_emergency(said: str) -> bool:
    """Whether `said` holds a word an emergency is told with, once its ordinary figures
    of speech are out."""
    return _EMERGENCY.search(plain(said)) is not None
