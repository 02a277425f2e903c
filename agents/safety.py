"""Safety screen for the pharmacy line: runs in code before any routing or model call.

A pharmacy must put safety before sales, so every caller utterance passes through
`screen` first. It recognises, from speech-to-text output (no punctuation, fillers,
rambling), a medical emergency, self-harm intent, or a dosing, pregnancy or
interaction question, and returns fixed, reviewed words that name no product, price
or order. Everything here is plain regular expressions over normalised text, so the
behaviour is reviewable and testable without a model.

Over 400 lines on purpose: every safety phrase lives in this one reviewed module, and
the phrases share their words (a medicine, a count, a child) with each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True, slots=True)
class SafetyLines:
    emergency_number: str = "911"
    crisis_line: str = "988"  # a crisis line the caller can call or text


class Concern(StrEnum):
    EMERGENCY = "emergency"  # needs the emergency number now: breathing, chest, collapse, overdose
    SELF_HARM = "self_harm"  # intent to hurt oneself or overdose: needs the crisis line
    DOSING = "dosing"  # doses, children, pregnancy, interactions: only a pharmacist answers


@dataclass(frozen=True, slots=True)
class SafetyAnswer:
    concern: Concern
    words: str  # what the caller hears; never names a product, price or order
    offer_person: bool  # the words end by offering a member of staff/pharmacist


# Other code looks for this in the last reply to know a person was offered.
OFFER_MARK = "put you through to our pharmacist"

# Normalised text is lower case words of [a-z0-9'] joined by single spaces, so a
# literal " " in a pattern is one word break and _G(n) skips up to n words; the
# lazy skip lets callers ramble ("there's like a tightness in my chest").
_W = r"[a-z0-9']+"


def _G(n: int) -> str:
    return rf"(?:{_W} ){{0,{n}}}?"


# Things people swallow by accident or in an overdose; used by several patterns.
_MEDS = (
    r"(?:pills?|tablets?|tabs|meds|medicines?|medications?|capsules?|painkillers?|"
    r"paracetamol|ibuprofen|calpol|nurofen|aspirin|co codamol|antidepressants|vitamins|"
    r"syrup|inhaler|prescription)"
)
_POISONS = (
    r"(?:bleach|detergent|washing (?:up )?(?:liquid|tablets?|pods?)|laundry (?:pods?|"
    r"capsules?|tablets?)|dishwasher tablets?|(?:button )?batter(?:y|ies)|antifreeze|"
    r"cleaning (?:stuff|products?|fluid|liquid)|weed ?killer|white spirit|e liquid|"
    r"vape (?:juice|liquid)|rat poison|nicotine|kerosene|paraffin|petrol|gasoline|lamp oil|"
    r"turpentine|methylated spirits?|drain cleaner|oven cleaner)"
)
_PACKS = r"(?:box(?:es)?|packets?|packs?|bottles?|strips?|tubs?)"
_NUM = (
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|sixteen|"
    r"eighteen|twenty|thirty|forty|fifty|sixty|a hundred|hundred)"
)
# A count of pills no dose reaches: taken, it is an overdose ("I took like twenty").
_MANY = (
    r"(?:[1-9]\d+|ten|eleven|twelve|fifteen|sixteen|eighteen|twenty|thirty|forty|fifty|"
    r"sixty|a hundred|hundreds|loads|dozens)"
)
# What a medicine is taken with, in a question about taking them together: the
# caller's own medicines, a drink, or a drug name ("ibuprofen", "co-codamol").
_INTAKE = (
    r"(?:my|his|her|their|the other|other|alcohol|a drink|drink|drinking|wine|beer|"
    r"\w*(?:profen|amol|irin|tine|zole|pril|olol|statin|mycin|cillin|xen|ine|ide|pam)s?)\b"
)
_KIN = (
    r"(?:husband|wife|partner|mum|mom|mother|dad|father|nan|nana|gran|granny|grandma|"
    r"grandad|grandpa|brother|sister|son|daughter|friend|flatmate|roommate)"
)
_CHILD = (
    r"(?:child|children|kids?|toddler|baby|babies|infant|newborn|son|daughter|little one|"
    r"boy|girl|grandson|granddaughter|nephew|niece)"
)
# Intent: the future or wishing, not what already happened (that is an emergency).
_INTENT = (
    r"(?:want|wanna|going|gonna|thinking|thought|plan|planning|try|trying|tempted|"
    r"about to|ready|urge|urges|might|feel like|felt like|been|keep|kept|scared|afraid)"
)


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives))


def _both(first: str, second: str) -> re.Pattern[str]:
    """Both phrases anywhere, in either order: a topic plus a question cue."""
    return re.compile(rf"^(?=.*(?:{first}))(?=.*(?:{second}))")


# Shopping: with one of these a line asks about buying, not taking ("is it 5 or 6 quid",
# "should I order one or two", "how many are in the box, 16 or 32", "two boxes").
_SHOPPING = (
    rf"\b(?:buy|buying|bought|order|ordering|purchase|deliver\w*|collect\w*|post|send|price|"
    rf"cost|costs|stock|pay|paying|free|offer|deal|pounds?|quid|dollars?|bucks|euros?|"
    rf"how much (?:is|are|does|do)|in (?:the|a|each) (?:{_PACKS}|tubes?|bag|basket)|"
    rf"(?:{_NUM}|a|a couple of|a few) (?:{_PACKS}|tubes?|tins?))\b"
)
# Asking for something: with one of these, "two of the ibuprofen, ok" answers "how many
# would you like?".
_ASKING_FOR = (
    r"\b(?:get|please|thanks|thank you|cheers|pick|pop|swing|drop by|come (?:in|by|round)|"
    r"open|opens|close|closes|yeah|yes|yep)\b"
)
# A medicine by name or kind, as said after a count: "two paracetamol", "one of the
# cetirizine", "four of the lozenges", "three of the sleep ones".
_DRUG = (
    rf"(?:{_MEDS}|ones|\w*(?:profen|amol|irin|tadine|izine|amine|zole|idine|amide|oxen|mycin|"
    rf"cillin|statin)s?|lozenges?|sachets?|antacids?|sprays?|drops|gel|cream|patch(?:es)?)"
)
_OF_DRUG = rf"(?: of (?:the|my|his|her|your) (?:{_W} )?{_DRUG}| {_DRUG})"
_FEW = r"(?:one|two|three|four|five|six|1|2|3|4|5|6|a couple of|a few)"
_OK = r"(?:ok|okay|alright|all right|fine|enough|too much|too many|safe)"


def _unless(guard: str, phrase: str) -> re.Pattern[str]:
    """A phrase in a line that says none of `guard`."""
    return re.compile(rf"^(?!.*(?:{guard}))(?=.*(?:{phrase}))")


# Dose questions asked the way shoppers ask, with a count and no dose word: with the
# count, each was read as an order (benchmarks/counted_asks.py: 55 of 540 dose trials in
# the first three blind sets sold to). Most hold only in a line that is not about
# buying, so "can you send two now and then two more next month" and "do you deliver
# twice a day" stay shopping.
_COUNTED = (
    _unless(
        _SHOPPING,
        rf"\bget away with\b {_G(2)}(?:{_NUM}|a couple|a few|more|another|extra|taking|having|"
        rf"giving|double)\b|\b(?:can|could|should) (?:i|he|she|we) (?:get|have|take|squeeze|fit)"
        rf" (?:(?:{_NUM}|another|one) )?more in\b(?! (?:stock|the|by|a|your|my|for|at|on)\b)|"
        # What the box or leaflet says against the count asked about.
        rf"\b(?:it|box|boxes|packet|pack|label|leaflet|bottle|instructions?|doctor|gp) (?:says?|"
        rf"said|tells? you)\b {_G(2)}(?:one|two|three|four|1|2|3|4|a|half|only|just|not|no more)"
        rf"\b {_G(6)}(?:but|so is|is (?:{_NUM}) {_OK}|(?:can|could|should) (?:i|he|she|we) "
        rf"(?:take|have|do|give|go|use))\b|"
        # Too many; which of two amounts; a whole one or half; so many a day.
        rf"\b(?:is|are|isn't|aren't) (?:{_NUM}|a couple|a few) {_G(2)}too (?:much|many)\b|"
        rf"\b(?:is it|do i (?:take|have|give|use)|should i|does (?:he|she) (?:take|have|get|need)|"
        rf"do (?:they|we|you) (?:take|have|give)) {_G(2)}(?:{_NUM}|a whole one|a half|half) "
        rf"{_G(4)}or (?:{_NUM}|half|a half)\b(?! (?:in (?:a|the|each|one)|free|for|{_PACKS}|"
        rf"tablets in|to a)\b)|\bhow many\b {_G(4)}(?:{_NUM}) or (?:{_NUM})\b|"
        rf"\b(?:is it|do i|should i|does (?:he|she)) {_G(3)}(?:{_NUM}|once|twice) (?:{_W} )?"
        rf"(?:a|per|each|every) (?:day|night|glass|dose|hours?)\b|"
        rf"\b(?:twice|(?:{_NUM}) times) (?:a|per|each|every) (?:day|night)\b|"
        rf"\b(?:can|could|should) (?:i|he|she|we) do (?:{_NUM}|a couple|a few|another|more)\b"
        rf"(?! (?:{_PACKS}|tubes?|tins?|for)\b)|"
        rf"\b{_FEW} (?:puffs?|squirts?|spoonfuls?|sprays? (?:each|in each|per|a)|drops? (?:each|"
        rf"in each|per|a))\b|"
        rf"\b(?:{_NUM}) {_G(3)}(?:straight away|first|to start|now) (?:and )?then {_G(2)}"
        rf"(?:{_NUM}|another|more)\b",
    ),
    _unless(
        rf"{_SHOPPING}|{_ASKING_FOR}",
        r"\b(?:half (?:a|of (?:a|one|the)) (?:tablet|pill|one|capsule|sachet|spoon\w*|"
        r"teaspoon\w*)|a whole one)\b|"
        # An amount of a medicine asked about: "is one of the cetirizine enough", "three
        # paracetamol ok or". Only as a question: "two of the ibuprofen, fine" answers
        # "how many would you like?".
        rf"^(?:is|are|would|will|can|could|should)\b.*\b(?:{_NUM}|a couple|a few|half){_OF_DRUG}"
        rf" {_G(3)}{_OK}\b|\b(?:{_NUM}|a couple|a few|half){_OF_DRUG} {_OK} (?:or|is it|is "
        rf"that|for (?:me|him|her|them|a {_W}|my {_W}))$|"
        # So many in a day, an hour or with a meal.
        rf"\b(?!one a day\b)(?:{_NUM}|a couple|a few){_OF_DRUG}? (?:a|an|per|every|each|in a|"
        rf"in one) (?:day|hour|night)\b|\b(?:{_NUM}){_OF_DRUG}? in (?:24|twenty four) hours\b|"
        rf"\b(?:{_NUM}|a couple|a few){_OF_DRUG}? (?:after|before|with) (?:my |your |his |her )?"
        rf"(?:tea|dinner|lunch|breakfast|food|meals?|eating)\b",
    ),
    _rx(
        rf"\b(?:take|taking|took|have|having|had|give|giving|them|tablets?|pills?|doses?)"
        rf"\b {_G(3)}(?:back to back|one after (?:the )?(?:other|another))\b",
        rf"\bwould (?:{_NUM}|a couple|a few) do (?:me|him|her|them|us)\b",
        r"\bgive (?:him|her|it) (?:another|more|one more|a second)\b(?! (?:ring|call|go|try|"
        r"look|chance|shout|bell|bath)\b)",
        rf"\b(?:{_NUM}|drops?|sprays?|puffs?|squirts?) {_G(3)}(?:in )?(?:each|either|both) "
        rf"(?:side|nostril|eye|ear)s?\b",
    ),
    # A few of a medicine, not of its packs, for a pain now: "could I have three of the
    # paracetamol, the pain is bad" asks to take them.
    _both(
        rf"\b(?:can|could|may|should) (?:i|he|she|we) (?:have|take) (?:{_NUM}|a couple|a few|"
        rf"another)(?: of (?:the|them|those|these|my))?\b(?! (?:{_PACKS}|tubes?)\b)",
        r"\b(?:pain(?! reli)|hurts?|hurting|aches?|aching|killing me|headache|migraine|agony|"
        r"so bad|really bad|is bad|can't sleep)\b",
    ),
    # Two medicines at once: "can I have one of the sleep ones and a cetirizine, both
    # together".
    _both(
        r"\b(?:both|all of them|the two of them) together\b|\bat the same time\b",
        r"\b(?:take|taking|have|having|give|giving|mix|mixing)\b",
    ),
    # Some taken today, and a question about more, either way round: "I've had two
    # today, can I get one in before bed".
    _both(
        rf"\b(?:i've|i have|i|he's|he has|he|she's|she has|she|we've|they've) (?:had|taken|"
        rf"took) (?:{_W} )?(?:{_NUM}|a couple|a few)(?: of (?:them|those|these|the {_W}|my "
        rf"{_W})| {_MEDS}| {_INTAKE})? (?:today|already|this morning|tonight|earlier|so far|"
        rf"last night|an hour ago|hours? ago)\b",
        r"\b(?:can|could|should|is it|am i|is that|would it|another|more|again)\b",
    ),
)


_PATTERNS: tuple[tuple[Concern, tuple[re.Pattern[str], ...]], ...] = (
    (
        Concern.EMERGENCY,
        (
            # Breathing trouble; "can't breathe through my nose" is a blocked nose.
            _rx(
                rf"\b(?:can'?t|cant|cannot|can not|couldn'?t|unable to|struggling to|struggle to|"
                rf"hard to|trouble|difficulty|isn'?t|is not|not|stopped|barely|hardly|won'?t) "
                rf"{_G(2)}breath(?:e|es|ing)?\b(?! {_G(2)}(?:through|thru|out of) "
                rf"(?:my|his|her|their|the|your) nose)",
                r"\b(?:short(?:ness)? of breath|gasping|choking|fighting for (?:breath|air)|"
                r"(?:turning|turned|gone|going) blue|lips (?:are |have )?(?:gone |turned )?blue)\b",
            ),
            # Chest pain in the ways people say it; "chesty cough" and "chest infection" don't match.
            _rx(
                r"\bchest (?:pains?|hurts?|hurting|is (?:really |so |very )?(?:hurting|tight|"
                r"sore|painful|heavy)|feels (?:\w+ )?(?:tight|heavy|crushed|like)|tight(?:ness)?|"
                r"pressure)\b",
                rf"\b(?:pains?|tightness|pressure|crushing|squeezing|heaviness|aching) {_G(3)}"
                r"(?:in|on|across|around) (?:my|me|his|her|their|the) chest\b",
                r"\bheart attack\b",
                # A sudden, worst-ever headache is a bleed until shown otherwise.
                r"\bworst headache\b|\bthunder ?clap\b",
            ),
            # Unconscious, collapsed, seizures and stroke signs.
            _rx(
                r"\b(?:unconscious|unresponsive|collapsed|passed out|blacked out|fainted|"
                r"keeled over|(?:not|isn'?t) responding|won'?t wake|can'?t wake|cant wake|"
                r"(?:not|isn'?t) waking)\b",
                # "fitting the new shelves" is not a fit, so "fitting" needs a person before it.
                r"\b(?:seizures?|seizing|convuls\w*|(?:having|had) (?:a )?fits?)\b|\b(?:is|he'?s|"
                r"she'?s|they'?re|started|keeps|been) fitting\b(?! (?:the|a|in|into|new|some)\b)",
                rf"\b(?:strokes?(?! of luck)|slurr\w*|face(?:'s)? {_G(3)}(?:droop\w*|dropp\w*|lopsided)|"
                r"droop\w* face|can'?t (?:move|lift|feel) (?:his|her|my|their) (?:arm|leg|face))\b",
            ),
            # Severe bleeding; "bleeding heavily" alone is left out as it usually means a period.
            _rx(
                r"\b(?:won'?t stop bleeding|can'?t stop (?:the |it |him |her )?bleeding|"
                r"bleeding (?:won'?t|will not|doesn'?t|isn'?t) stop\w*|bleeding (?:really |so |"
                r"very )?(?:badly|a lot|loads|everywhere|profusely|non stop)|blood everywhere|"
                r"(?:lots|loads) of blood|so much blood|(?:losing|lost) (?:a lot of|lots of|so "
                r"much) blood|severe bleeding|pouring (?:with )?blood|(?:pumping|spurting|gushing) "
                r"(?:out|blood|everywhere))\b",
            ),
            # Severe allergy: swelling of the airway, not a "sore throat".
            _rx(
                rf"\b(?:tongue|lips?|mouth|face) {_G(3)}(?:swell\w*|swollen|puff\w*)",
                rf"\bthroat(?:'s)? {_G(3)}(?:swelling|closing|tightening)\b",
                r"\b(?:swell\w*|swollen) (?:tongue|lips|throat)\b",
                r"\b(?:anaphyla\w*|epi ?pen|allergic shock|(?:bad|severe|serious|major|massive|"
                r"huge) allergic reaction)\b",
            ),
            # Swallowed by accident: eating or swallowing medicine or a household poison.
            _rx(
                rf"\b(?:swallowed|ate|eaten|chewed|chewing|got into|gotten into|been into|drank|"
                rf"drunk|got hold of) {_G(6)}(?:{_MEDS}|{_POISONS})\b",
                # A child (or he/she) took some of, or someone else's, medicine.
                rf"\b(?:{_CHILD}|he|she|they)\b {_G(4)}(?:took|taken|had|grabbed|got) "
                rf"(?:some|a bunch|a handful|a load|loads|lots|a few|a couple|all|the whole|a "
                rf"whole|my|our|your|{_W}'s|{_NUM}) {_G(4)}{_MEDS}\b",
                rf"\b(?:took|taken|swallowed|had|given|gave|ate|eaten) {_G(2)}(?:someone "
                rf"else'?s|somebody else'?s|the wrong|(?:my|his|her|their) {_KIN}'?s) {_G(2)}"
                rf"{_MEDS}\b",
            ),
            # A tight or swollen throat with a sting, a bite, swelling or breathing.
            _both(
                rf"\bthroat(?:'s)? {_G(3)}(?:tight|tighter|swollen)\b",
                r"\b(?:stung|sting|bitten|bite|allergic|swell\w*|puff\w*|breath\w*|dizzy|"
                r"wheez\w*|nuts?|peanuts?)\b",
            ),
            # A child who drank a lot of a medicine: "he's drunk like half the bottle".
            re.compile(
                rf"^(?=.*\b(?:{_CHILD}|he'?s|she'?s|he|she)\b)(?=.*\b{_MEDS}\b)(?=.*\b(?:drunk|"
                rf"drank|swallowed|downed) {_G(2)}(?:half|most|all|the whole|a whole|loads|lots|a "
                rf"load|a lot) (?:of )?(?:the |a |his |her |my )?(?:{_PACKS}|{_MEDS}|lot)\b)"
            ),
            # Overdose already taken; wanting to is self-harm below.
            _rx(
                rf"\b(?:took|taken|had|swallowed|given|gave|downed) {_G(4)}(?:way too many|too "
                rf"many|too much(?! (?:to drink|drink|alcohol|wine|beer|booze))|(?:a|the) whole "
                rf"{_PACKS}|an entire|the entire)\b",
                r"\b(?:overdosed|od'd|od'?ed|od'?ing|o d'?d|o d d|o d ed|od ed|ods on|(?:taken|took|"
                r"had|done|did) an? (?:\w+ )?(?:overdose|od|o d))\b",
                # "ODd" is written "odd", an ordinary word ("eighty-odd in a box", "that's
                # odd", "an odd mole"): only after a person, last or before when, or taken on
                # something.
                r"\b(?!(?:that|it|what|there|here|how|who|this|one|let|where|which)'s\b)(?:he|"
                r"she|they|i|we|someone|somebody|[a-z]+'s)(?:'s|'ve)?(?: just)? odd(?=$| (?:on|"
                r"again|last|yesterday|earlier|tonight|this)\b)|\b(?:odd|od) on (?:(?:his|her|my|"
                r"their|some|the) )?(?:pills|tablets|meds|medication|drugs|heroin|something|"
                r"painkillers|sleeping \w+|\w+ pills|\w+ tablets)\b",
                rf"\b(?:took|taken|swallowed|downed|had) {_G(2)}{_MANY} {_G(2)}(?:of (?:the |my |"
                rf"his |her )?)?{_MEDS}\b",
                # "food poisoning" and "poison ivy" are shopping, not poisoning.
                r"(?<!food )\bpoison(?:ed|ing)?\b(?! (?:ivy|oak))",
                r"\b(?:ambulance|medical emergency)\b",
            ),
        ),
    ),
    (
        Concern.SELF_HARM,
        (
            # "would it take to just end it", "take all of them at once tonight", "done
            # with everything": said in the bench's caller-style scenarios and missed.
            _rx(
                r"\b(?:just |to )end it\b(?! there)|\bend it all\b|\bend (?:my life|everything)\b",
                rf"\b(?:take|swallow|have|down) {_G(3)}all {_G(3)}(?:at once|in one go|tonight|"
                rf"together)\b",
                r"\b(?:i'?m|im|i am) (?:just )?(?:done|finished) with (?:everything|it all|life|"
                r"living)\b",
                # "so that I don't have to wake up again", "would I just not wake up".
                r"\bso (?:that )?i (?:don'?t|dont|do not|never|won'?t|wouldn'?t) (?:have to |"
                r"need to |ever )?wake up\b|\b(?:never|not) wake up again\b|\bwould i "
                r"(?:just )?(?:not|never) wake up\b",
                r"\b(?:there'?s|theres|there is) no point (?:anymore|any more|in anything|to "
                r"anything|to it all|in any of it)\b|\bno point (?:anymore|any more)\b",
                r"\b(?:nobody|no one|noone) (?:has|have|will have|would have|needs?|would need) to "
                r"(?:deal with|put up with|worry about|look after|bother with) me\b",
                # Said by callers nobody here wrote for (a blind set): wanting it all to
                # stop, sleep without waking, no point, pills saved up, "if I was gone".
                # Not "something to make it stop" (an itch, a cough): that is shopping.
                r"\b(?:want|wanna) (?:it all|everything|all of it|it all) (?:to )?(?:stop|end)\b",
                r"\b(?:sleep|drift off) (?:and|forever and) (?:never|not) (?:wake|waking) up\b",
                r"\b(?:don'?t|dont|do not|can'?t|cannot|no longer) see (?:the|any) point\b",
                # Not "collecting my prescription".
                rf"\b(?:saving|saved|stockpil\w*|hoard\w*) (?:up )?(?:all )?(?:my |the |his |"
                rf"her )?{_MEDS}\b",
                r"\bif i (?:was|were) gone\b|\bif i (?:wasn'?t|weren'?t) (?:here|around|alive)\b",
                r"\boverdos\w*\b",
                r"\b(?:been|keep|kept|started|start) (?:cutting|hurting|harming|burning) my ?self\b",
                # Goodbyes and settled affairs.
                r"\bwon'?t (?:be )?(?:needing|need) (?:it|them|anything|these|those|my \w+)\b",
                r"\bwon'?t be (?:calling|ringing|around|here|needing) (?:again|anymore|any more|"
                r"much longer|after)\b|\bone last time\b",
                r"\b(?:written|wrote|writing) (?:my |the )?(?:letters|notes|a note|goodbyes?|will)\b",
                r"\bgiv(?:ing|en|e) away (?:all )?(?:of )?my (?:things|stuff|belongings)\b",
                r"\b(?:doesn'?t|does not|don'?t) matter any ?more\b|\b(?:had|lived) my (?:time|"
                r"life)\b",
                r"\b(?:sleep|sleeping) (?:for good|forever)\b|\bmake (?:it all|everything|all of "
                r"it) (?:just )?stop\b",
                rf"\bas many {_G(4)}as (?:you'?ll|you will|you can|you would) (?:let|sell|give)\b",
            ),
            _rx(
                r"\bkill(?:ing)? (?:my ?self|me self)\b",
                r"\bsuicid\w*",
                r"\bself harm\w*|\bharm(?:ing|ed)? my ?self\b",
                # "I hurt myself playing football" is an injury; only intent counts.
                rf"\b{_INTENT}\b {_G(3)}(?:hurt|harm|cut|cutt|burn|injur)(?:ing|e)? my ?self\b",
            ),
            _rx(
                r"\bend(?:ing)? (?:it all|my (?:own )?life|everything|things|it for good)\b",
                rf"\b{_INTENT}\b {_G(3)}end(?:ing)? it\b(?! (?:here|there)\b)",
                r"\b(?:don'?t|dont|do not|no longer|never) (?:really )?(?:want|wanna) (?:to )?"
                r"(?:live|be alive|be here|exist|wake up|go on|carry on|be around)\b",
                r"\b(?:want|wanna|ready|going|gonna) (?:to )?(?:die|be dead)\b|\bwish i (?:was|"
                r"were) dead\b|\bbetter off (?:dead|without me|gone)\b",
                r"\b(?:no|nothing|not any) (?:point|reason) (?:in |to |of )?(?:living|live|going "
                r"on|carrying on|being here|life)\b|\bcan'?t (?:go on|carry on|do this anymore)\b",
            ),
            # Overdose intent and lethal amounts.
            _rx(
                rf"\b{_INTENT}\b {_G(3)}(?:overdos\w*|od)\b",
                r"\b(?:lethal|fatal|deadly) (?:dose|amount)\b",
                rf"\b(?:enough|how many|how much)\b {_G(8)}(?:to )?(?:kill (?:me|myself|a person|"
                rf"someone|somebody|you)|die|be (?:fatal|lethal)|not wake up)\b",
                r"\b(?:most|more) (?:dangerous|deadly|lethal|harmful)\b",
                r"\bwould (?:that|it|this|they) be enough\b",
            ),
            # Buying more than a dose's worth: "what's the most paracetamol I can buy",
            # "a hundred paracetamol", "from different shops" (a blind set's callers).
            # Pills, not packs: "20 boxes of paracetamol" is an order over the line's limit.
            _rx(
                rf"\b{_MANY} (?:of (?:the |those |these )?)?{_MEDS}\b {_G(4)}(?:can|could|will you "
                rf"let|am allowed to|allowed to) {_G(1)}(?:buy|get|order)\b",
                rf"\b(?:can|could) (?:i|we) (?:buy|get|order) (?:like |about |maybe )?{_MANY} (?:of "
                rf"(?:the |those |these )?)?{_MEDS}\b",
            ),
            # Around a sale's limit: other shops, or a few at a time over days.
            _both(
                r"\b(?:different|other|several|separate|multiple) (?:shops|pharmacies|chemists|"
                r"stores)\b|\bover (?:a few|a couple of|several|the next few) days\b|\b(?:a few|"
                r"one|a box|a pack) at a time\b",
                r"\b(?:paracetamol|co codamol|aspirin|ibuprofen|painkillers?|pills|tablets)\b",
            ),
            # Taking the lot at once. "I'll take the whole lot" (buying) names no pills,
            # no intent and no "at once", so it does not match.
            _rx(
                rf"\b(?:take|takes|took|taking|swallow|swallowing|down|neck) {_G(2)}(?:all|whole|entire|"
                rf"every)\b {_G(3)}(?:{_MEDS}|{_PACKS})\b {_G(4)}(?:at once|in one go|all "
                rf"together|tonight|right now|so i (?:don'?t|won'?t) wake up)\b",
                rf"\b{_INTENT}\b {_G(3)}(?:take|taking|swallow|swallowing|down|downing|neck|"
                rf"necking) {_G(2)}(?:all|whole|entire|every)\b {_G(3)}(?:{_MEDS}|{_PACKS})\b",
                r"\b(?:take|swallow|down|neck) (?:them|these|those|the lot|it) all (?:at once|"
                r"in one go)\b",
            ),
        ),
    ),
    (
        Concern.DOSING,
        (
            # How many at once, or a drink after a medicine: dose and interaction questions
            # in callers' words ("can I take like four paracetamol at once", "a few beers if
            # I've taken paracetamol").
            _rx(
                rf"\b(?:can|could|should) (?:i|he|she|we|you) {_G(2)}(?:take|have|give)\b "
                rf"{_G(3)}(?:{_NUM}|a few|several|more|another|extra|double)\b {_G(3)}(?:at once|"
                rf"at a time|together|in a day|a day|in one go)\b",
                rf"\b(?:alcohol|booze|drink|drinks|wine|beer|beers|pints?)\b {_G(6)}(?:if|after|"
                rf"when|since) {_G(3)}(?:taken|take|taking|had|on)\b",
                rf"\b(?:tell me|say|know) {_G(3)}how (?:much|many) (?:ml|mls|tablets|pills|to "
                rf"(?:take|give))\b",
            ),
            # "How much / many / often ... should I take / give"; a subject is required so
            # "how long does delivery take" and "how many can you give me" stay shopping.
            _rx(
                rf"\bhow (?:much|many|often|regularly|frequently)\b {_G(4)}(?:can|could|should|"
                rf"shall|do|does|must|may|would|am i allowed to|is it safe to) (?:i|he|she|we|"
                rf"they|you|u|my {_W}|a {_W}|the baby|kids|children|someone|people|adults) "
                rf"{_G(2)}(?:take|give(?! (?:me|us)\b)|use|swallow|chew|apply|drink)\b",
                rf"\bhow (?:much|many)\b {_G(6)}(?:a|per|in a|each|every|in one) (?:day|night|"
                rf"24 hours|twenty four hours|dose)\b|\bhow (?:much|many)\b {_G(3)}to (?:take|give)\b",
                rf"\b(?:max(?:imum)?|most|limit)\b {_G(6)}(?:doses?|dosage|a day|per day|in a day|"
                rf"i can take|can i take|you can take|to take|should i take)\b",
                r"\b(?:double (?:dose|up|the dose)|missed (?:a|my|the|his|her) (?:dose|tablet|pill)|"
                r"forgot (?:to take )?(?:a|my|the) (?:dose|tablet|pill)|next dose|between doses|"
                r"too soon (?:to|for)|how long (?:between|apart|before (?:i can )?(?:take|give)|"
                r"after (?:taking|the last|my last|his last|her last)))\b",
                rf"\b(?:most|max(?:imum)?|how many|as many)\b {_G(3)}(?:{_MEDS}|{_PACKS})\b "
                rf"{_G(4)}(?:can|could|will you let|am allowed to|allowed to) {_G(1)}(?:buy|get|"
                rf"order)\b",
                # "take another": the space after "take" was missing, so only "give" matched.
                r"\b(?:can|could|should|when can) (?:i|he|she|you|we) (?:take |have |give (?:him |her "
                r"|them )?)(?:another|more|some more|any more|a second|the next|extra)\b",
                rf"\bhow long {_G(3)}wait (?:between|before|after|until)\b",
                rf"\bhow long after\b {_G(4)}(?:can|could|should|before|until) (?:i|he|she|we|you)\b",
                # Taken twice, doubled, by accident; kept on for days.
                rf"\b(?:took|taken|done|had|given|gave) {_G(4)}twice\b|\bby accident\b|\bdoubled? "
                rf"(?:up|dosed)\b",
                rf"\b(?:keep|carry on|continue) (?:taking|using|giving)\b {_G(4)}(?:for (?:more|"
                rf"longer|over|weeks|days|months)|more than|longer than)\b",
                r"\bwould it be (?:ok|okay|alright|safe|fine) to (?:take|have|use|give|drink)\b",
                r"\bis (?:that|it|this) (?:ok|okay|alright|safe|fine) together\b",
                # Too many of a medicine, named or counted ("would two Night Nurse be too many");
                # "is the 32 pack too much" asks the price.
                rf"\b(?:would|will) (?:{_NUM}|a couple|a few) {_G(3)}be too (?:much|many)\b",
            ),
            # "Dose" asks how much to take only with a cue; "what's the dose of the
            # ibuprofen" asks its strength, and "low dose aspirin" is a product.
            # "Dosage" always asks how much to take.
            _rx(r"\bdosage\b"),
            *_COUNTED,
            # Too much, or so many times a day, of a medicine: "how many mg of ibuprofen is
            # too much", "is 1000mg of paracetamol four times a day ok".
            _both(
                rf"\b(?:{_MEDS}|mg|milligrams?|ml)\b",
                rf"\btoo (?:much|many)\b|\b(?:{_NUM}|once|twice) (?:times )?(?:a|per) (?:day|"
                rf"night)\b {_G(2)}(?:ok|okay|safe|fine|alright|too much|enough)\b",
            ),
            _both(
                r"(?<!low )\bdos(?:e|es|age|ing)\b(?! (?:syringe|spoon|cup)s?\b)",
                rf"\b(?:should|can|could|take|taking|took|give|giving|gave|safe|max|maximum|"
                rf"highest|right|correct|recommended|usual|normal|how|missed|forgot|double|"
                rf"extra|another|next|between|{_CHILD}|him|her|adults?|weigh|weight|old|months?|"
                rf"years?|a day|per day)\b",
            ),
            # A child's age or a child plus a question; "children's paracetamol please" and
            # "how much is the calpol" are shopping.
            _both(
                rf"\b(?:{_NUM}(?: and a half)? (?:years?|yrs?|months?|weeks?)|(?:a|an|one) "
                rf"(?:year|month|week) old|{_CHILD})\b",
                rf"\bhow (?:much|many|often)\b(?!(?: {_W}){{0,4}} (?:is|are|"
                rf"does|do you|have you|you have|you got|in stock|would it cost|will "
                rf"it cost|it costs?|cost)\b)|\b(?:can|could|should) (?:i|we|you) give\b|\bgive "
                r"(?:him|her|them)\b|\bis (?:it|this|that) (?:ok|okay|safe|alright|fine)\b|"
                r"\bsafe (?:to|for)\b|\b(?:ok|okay) to give\b|\btoo (?:much|many)\b|\bcan (?:he|she|they) (?:have|take)\b|"
                r"\b(?:ml|mls|millilitres|milliliters|spoons?|spoonfuls?|teaspoons?)\b(?! bottles?\b)|\bcan (?:my|the|your) "
                rf"{_W} (?:have|take)\b",
            ),
            # Pregnancy with a safety cue; "pregnancy test" and "folic acid for pregnancy"
            # are products. Breastfeeding is always a pharmacist question.
            _both(
                r"\b(?:pregnan\w*(?! tests?)|expecting a baby|trying to conceive|trying for a "
                r"baby)\b|\b(?:i'?m|im|i am|she'?s|she is|we'?re|we are) expecting\b(?! (?:a |an |"
                r"the |my |our |some |it |that |this |to )?(?:delivery|parcel|package|call|order|"
                r"prescription|refund|letter|email|text|visitor|guests?|him|her|them|be|hear)\b)",
                r"\b(?:safe|ok|okay|alright|fine|allowed|harm|hurt|affect|risk|while|whilst|"
                r"during|(?:can|could|should|may|am) i (?:still )?(?:take|have|use|be)|take|"
                r"taking|use|using)\b",
            ),
            _rx(r"\b(?:breast ?feed\w*|breast ?fed|nursing (?:mother|mum|mom|my baby))\b"),
            # Interactions: taking one thing with another, or with alcohol.
            _rx(
                rf"\b(?:can|could|should|may|is it (?:ok|okay|safe|alright|fine|bad|dangerous)"
                rf"(?: for (?:me|him|her))? to|am i (?:ok|okay|allowed) to|safe to|ok to|okay to)"
                rf"\b {_G(2)}(?:take|mix|combine|use|give|drink)\b {_G(6)}(?:with(?! (?:me|us|"
                rf"you|my order|the order)\b)|alongside|together|on top of|as well as|while (?:on|"
                rf"taking|i'?m on)|whilst|at the same time as)\b",
                rf"\b(?:interact\w*|interfere with|clash(?:es)? with|reacts? with|mix(?:ing)? "
                rf"{_G(4)}(?:with|and))\b",
                rf"\b(?:alcohol|booze|drink|drinking|drinks|wine|beer|beers|pints?|spirits|vodka)"
                rf"\b {_G(2)}(?:with|on|while (?:on|taking)|whilst|after taking|when taking) "
                rf"(?:these|this|them|it|those|the|my|antibiotics|{_MEDS}\b|{_INTAKE})",
                rf"\b(?:take|taking|give) {_G(4)}(?:after|with|while|if i'?ve been) (?:drinking|"
                rf"alcohol|a drink|a few drinks|beer|wine)\b",
                rf"\b(?:can|could|should|is it (?:ok|okay|safe|alright|fine) to|safe to) {_G(1)}"
                rf"(?:take|use|give)\b {_G(4)}(?:if|when|while|whilst) (?:i|i'?m|im|i'?ve|he|"
                rf"he'?s|she|she'?s|you|you'?re|my|they|someone)\b",
                rf"\b(?:i'?m|im|i am|he'?s|she'?s|i'?ve been|i have been) {_G(2)}(?:on|taking) "
                rf"{_G(4)}(?:can|could|should|is it|will|would|does) {_G(3)}(?:take|use|mix|give|"
                rf"interact|affect|clash)\b",
            ),
            # "Is it ok to have the naproxen on top of that"; "have … with that" is shopping.
            _rx(
                rf"\b(?:is it (?:ok|okay|safe|alright|fine|bad|dangerous) to|can i|could i|should i|"
                rf"safe to|ok to|okay to) have\b {_G(6)}(?:on top of|alongside|at the same time as|"
                rf"while (?:on|taking|i'?m on))\b",
            ),
            # "I'm on sertraline, can I take the migraine ones", "he's on a load of tablets,
            # can he take the Nytol".
            # On a medicine, not "on my way" or "on holiday".
            _both(
                rf"\b(?:i'?m|im|i am|he is|she is|they'?re|{_W}'s) {_G(3)}on {_G(4)}(?:tablets|"
                rf"pills|medication|meds|medicines?|\w*(?:profen|amol|irin|tine|zole|pril|olol|"
                rf"statin|mycin|cillin|xen|ine|ide|pam|xin)s?)\b",
                r"\b(?:can|could|should) (?:i|he|she|they) (?:still )?(?:take|have|use)\b",
            ),
            # "I take low dose aspirin every day, is it ok with naproxen".
            _both(
                r"\b(?:i|he|she|we) (?:take|takes|taking|am on|have)\b|\b(?:i'?m|im|he'?s|she'?s) on\b",
                r"\bis (?:it|that|this) (?:ok|okay|safe|alright|fine|bad|dangerous) (?:with|alongside|"
                r"on top of|together)\b",
            ),
            # "Is it safe with ibuprofen?", "is that alright with my other tablets?", "can I
            # have it with paracetamol": measured, these reached sales, and a yes in front
            # of one ("yes but is it safe with ibuprofen?") added ibuprofen to the order.
            _rx(
                r"\b(?:is|are|will|would) (?:it|that|this|they|these|those) (?:\w+ )?(?:be )?"
                r"(?:safe|dangerous|bad|harmful) (?:to (?:take|have|use|give) )?(?:with|"
                r"alongside|on top of|together)\b",
                rf"\b(?:is|are|will|would) (?:it|that|this|they) (?:be )?(?:ok|okay|alright|"
                rf"all right|fine) (?:to (?:take|have|use|give) )?(?:with|alongside|on top of) "
                rf"{_INTAKE}",
                rf"\b(?:can|could|should) (?:i|he|she|we|they) (?:take|have|use|give) (?:it|this|"
                rf"that|them|these|those|\w+) (?:with|alongside|on top of|together with) "
                rf"{_INTAKE}",
            ),
            # Prescription drugs that commonly interact, named with a question.
            _both(
                r"\b(?:warfarin|blood thinners?|anticoagulants?|apixaban|rivaroxaban|edoxaban|"
                r"dabigatran|clopidogrel|heparin|lithium|methotrexate|antidepressants?|ssris?|"
                r"maois?|on the pill|insulin|chemo\w*|steroids)\b",
                r"\b(?:can (?:i|he|she|you|we) (?:still )?(?:take|have|use|mix|give)|could i "
                r"(?:take|have|use)|should i|safe|ok to|okay to|alright to|fine to|with(?! me\b)|"
                r"alongside|(?:i'?m|im|i am|he'?s|she'?s|been|currently|already) (?:\w+ )?(?:on|"
                r"taking))\b",
            ),
            # "Is it safe to take/give ...": a safety question however it continues.
            _rx(
                r"\bsafe to (?:take|give|use|have|mix|drink|combine)\b|\bis it (?:\w+ )?safe for "
                r"(?:me|him|her|my|a|the|kids|children|pregnant)\b",
                # Suitability with a condition; kept to people and conditions so "is that ok
                # for friday" stays reception.
                rf"\b(?:is|are) {_G(3)}(?:ok|okay|safe|alright|fine) (?:for|with|if|when) (?:him|"
                rf"her|my|kids|children|babies|a (?:child|baby|kid|toddler)|asthma|asthmatics?|"
                rf"diabetics?|diabetes|people with|someone with|high blood pressure|an? {_NUM} "
                rf"(?:year|month) old)\b",
                r"\bempty stomach\b",
            ),
        ),
    ),
)

# STT hesitation sounds carry no meaning and would break adjacent-word patterns.
_FILLERS = re.compile(r"\b(?:u+m+|u+h+m*|e+r+m*|e+r+|a+h+|h+m+|m+h*m+)\b")


def normalise(said: str) -> str:
    text = said.lower()
    for quote in "\u2019\u2018`\u00b4":
        text = text.replace(quote, "'")
    # Hyphens and punctuation become spaces: "self-harm" is "self harm", "2-year-old" splits.
    text = re.sub(r"[^a-z0-9']+", " ", text)
    text = re.sub(r"(?<![a-z0-9])'|'(?![a-z0-9])", " ", text)
    text = _FILLERS.sub(" ", text)
    return " ".join(text.split())


def _words(concern: Concern, lines: SafetyLines) -> str:
    offer = f"Would you like me to {OFFER_MARK}"
    if concern is Concern.EMERGENCY:
        return (
            f"This sounds like an emergency. Please call {lines.emergency_number} now. "
            f"{offer} as well?"
        )
    if concern is Concern.SELF_HARM:
        return (
            "I'm so sorry you're feeling this way. "
            f"You can call or text {lines.crisis_line} any time. "
            f"If you're in danger right now, please call {lines.emergency_number}. {offer}?"
        )
    return (
        "For your safety, questions about doses, pregnancy or taking medicines together "
        f"must be answered by a pharmacist. {offer}?"
    )


def screen(said: str, lines: SafetyLines = SafetyLines()) -> SafetyAnswer | None:
    """The safety answer for what the caller said, or None when it is ordinary shopping.

    Concerns are checked in order of precedence, so an emergency beats self-harm,
    which beats a dosing question.
    """
    text = normalise(said)
    if not text:
        return None
    for concern, patterns in _PATTERNS:
        if any(p.search(text) for p in patterns):
            return answer(concern, lines)
    return None


_SEVERITY = {Concern.DOSING: 0, Concern.SELF_HARM: 1, Concern.EMERGENCY: 2}


def holds(answered: Concern | None, read: Concern) -> bool:
    """Whether the concern already answered on the call covers a new reading: it is at
    least as grave (an emergency's follow-up keeps the emergency number)."""
    return answered is not None and _SEVERITY[answered] >= _SEVERITY[read]


def answer(concern: Concern, lines: SafetyLines = SafetyLines()) -> SafetyAnswer:
    """The fixed words for a concern, however it was recognised."""
    return SafetyAnswer(concern, _words(concern, lines), offer_person=True)


_YES = re.compile(
    r"\b(?:yes|yeah|yea|yep|yup|ya|aye|sure|ok|okay|alright|all right|please|go ahead|"
    r"go on|put me through|connect me|transfer me|do it|i would|i'd like that|that would be "
    r"(?:great|good|helpful|lovely)|absolutely|definitely|of course)\b"
)
# "That's okay" and "I'm fine" decline; any no wins, since a wrong transfer is
# cheaper to fix by asking again than ignoring a refusal.
_NO = re.compile(
    r"\b(?:no|nope|nah|not|don'?t|dont|do not|never ?mind|i'?m (?:ok|okay|fine|good|alright)|"
    r"(?:that'?s|thats|it'?s|its) (?:ok|okay|fine|alright|all right)|i'?ll (?:call|ring|phone|"
    r"manage|be fine)|later|won'?t|cancel|stop|wait|hang on|hold on)\b"
)
# Phrases that contain a "no" word but mean yes.
_YES_DESPITE_NO = re.compile(r"\b(?:why not|(?:i )?(?:don'?t|do not|wouldn'?t) mind)\b")


def accepts_person(said: str) -> bool:
    """True when the reply to the offer of a person is a yes and not a no."""
    text = _YES_DESPITE_NO.sub(" yes ", normalise(said))
    return bool(_YES.search(text)) and not _NO.search(text)


def raised_self_harm(reply: str, lines: SafetyLines = SafetyLines()) -> bool:
    """Whether an earlier reply of the call was the self-harm answer."""
    return f"call or text {lines.crisis_line}" in reply


def after_self_harm(lines: SafetyLines = SafetyLines()) -> str:
    """Said instead of any sale for the rest of a call in which the caller spoke of
    harming themselves: "I just want some paracetamol then" must not become an order."""
    return (
        "I'm not able to take an order for medicines on this call. "
        f"You can call or text {lines.crisis_line} any time, and if you're in danger "
        f"please call {lines.emergency_number}. Would you like me to {OFFER_MARK}?"
    )


_CHECK_OPENING = "I'm sorry to hear that. If it's severe, or it came on suddenly,"


def check(lines: SafetyLines = SafetyLines()) -> str:
    """Said to a line the probe alone read as an emergency, in which no word an emergency
    is told with was said (agents/cues.py): the number, with an "if". Nothing is sold on
    that line, and after it only a request for a product named is served
    (agents/screen.py)."""
    return (
        f"{_CHECK_OPENING} please call {lines.emergency_number} now. "
        "Otherwise, tell me what you need and I'll help."
    )


def checked(reply: str) -> bool:
    """Whether `reply` was `check`'s words."""
    return reply.startswith(_CHECK_OPENING)


def concern_answered(reply: str) -> Concern | None:
    """Which safety answer `reply` was, from the words only this module writes."""
    if reply.startswith("This sounds like an emergency."):
        return Concern.EMERGENCY
    if reply.startswith(("I'm so sorry you're feeling this way.", "I'm not able to take an order")):
        return Concern.SELF_HARM
    if reply.startswith("For your safety,"):
        return Concern.DOSING
    return None


_DECLINE = re.compile(r"\b(?:no|nah|nope|fine|bye|goodbye|thanks|thank you|ok|okay|never ?mind)\b")


def follow_up(concern: Concern, said: str, lines: SafetyLines = SafetyLines()) -> str:
    """The answer to words after a safety answer that neither accept a person nor name a
    product: the advice stands ("can't you just tell me how many ml" gets no dose)."""
    if concern is Concern.EMERGENCY and _DECLINE.search(normalise(said)):
        return (
            f"All right. If it gets worse, please call {lines.emergency_number} straight away. "
            "Is there anything else I can help with?"
        )
    if concern is Concern.EMERGENCY:
        return (
            f"Please call {lines.emergency_number} now. They can tell you what to do "
            f"straight away. Would you like me to {OFFER_MARK} as well?"
        )
    if concern is Concern.SELF_HARM:
        return after_self_harm(lines)
    if _DECLINE.search(normalise(said)):
        return "All right. Is there anything else I can help with?"
    return (
        "I'm sorry, only a pharmacist can advise on that safely. "
        f"Would you like me to {OFFER_MARK}?"
    )
