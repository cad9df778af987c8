"""Apply issue 22's selection rule (README.md, "Growth (issue 22)") to fetched snapshots.

Not run by the tests: it reads repository snapshots fetched with the search tools' ``fetch``
(``/work/.mirror/<owner>+<name>/repo``, or ``$CORPUS_MIRRORS``) and writes the taken files, the
licence texts and their manifest entries. ``SELECTION`` is the audit trail: every candidate the
rule considered, in the order it considered them, with what happened to it; ``selection.yaml``
is written from it. Re-running it on the same snapshots gives the same corpus.

    python tests/corpus/tools/collect.py          # writes files, licences, selection.yaml
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CORPUS / "tools"))
from derive_inputs import derive  # noqa: E402

MIRRORS = Path(os.environ.get("CORPUS_MIRRORS", "/work/.mirror"))
PER_REPO = 4
RULE = "issue 22 growth rule (README.md)"

# (format, keyword, repository, outcome): outcome "take", or why the repository was not taken.
NO_LICENCE = "no licence file at the root: no right to redistribute"
NO_FILES = "no file of the format"
NC = "not checked: skipped by its name in the last batch (a judgement, not the rule)"
NOT_APP = "not checked (an application's name, not a Prompty project)"
SELECTION: list[tuple[str, str, str, str]] = [
    ("prompty", "prompty", "sekiguchimend/prompty", "excluded: named like the tool (*/prompty)"),
    ("prompty", "prompty", "promptymike/ptwg-store", NO_FILES),
    ("prompty", "prompty", "skosovsky/prompty", "excluded: named like the tool (*/prompty)"),
    ("prompty", "prompty", "sahilkathpal/prompty", "excluded: named like the tool (*/prompty)"),
    ("prompty", "prompty", "wmeints/promptyard", NO_FILES),
    ("prompty", "prompty", "ricasolucoes/Prompty", "excluded: named like the tool (*/prompty)"),
    ("prompty", "prompty", "edlontech/beam_me_prompty", NO_FILES),
    ("prompty", "prompty", "ezexe/prompty-prompter-pioneer-puppeteer", NO_FILES),
    ("prompty", "prompty", "itsatony/go-prompty", NO_FILES),
    ("prompty", "prompty", "jck411/humptyprompty", NO_FILES),
    ("prompty", "prompty", "infosupport/promptyard", NO_FILES),
    ("prompty", "prompty", "promptymike/Aktuo", NO_FILES),
    ("prompty", "prompty", "(rest of the list)", "keyword abandoned: it matches names, and the "
     "first 12 candidates held no .prompty file; replaced by `-prompty` (below)"),
    ("prompty", "-prompty", "itsatony/go-prompty", NO_FILES),
    ("prompty", "-prompty", "ryan-ahn/project-prompty-web", NO_FILES),
    ("prompty", "-prompty", "ryan-ahn/project-prompty-server", NO_FILES),
    ("prompty", "-prompty", "Azure-Samples/contoso-chat-csharp-prompty", "take"),
    ("prompty", "-prompty", "Azure-Samples/summarization-openai-csharp-prompty", "take"),
    ("prompty", "-prompty", "jonathanscholtes/Azure-AI-RAG-CSharp-Prompty", "take"),
    ("prompty", "-prompty", "microsoft/aitour-e2e-dev-with-prompty-and-ai-studio", "take"),
    ("prompty", "-prompty", "youh4ck3dme/-peci-lne-SEO-prompty-", NO_FILES),
    ("prompty", "-prompty", "Starnekan/GPT-Prompty", NO_FILES),
    ("prompty", "-prompty", "Azure-Samples/agent-openai-python-prompty-langchain-pinecone", "take"),
    ("prompty", "-prompty", "agentit/Base-IA-PromptyBot-V1.2", NO_FILES),
    ("prompty", "-prompty", "my-vercel-deployment-of-prompty/prompty",
     "excluded: named like the tool (*/prompty)"),
    ("prompty", "-prompty", "SenemDEV/gpt-prompty", NO_FILES),
    ("prompty", "-prompty", "Azure-Samples/agent-python-openai-prompty-langchain", "take"),
    ("prompty", "-prompty", "katerina-svi/Fajne-prompty-web", NO_FILES),
    ("prompty", "-prompty", "AI-fracture/front-prompty", "not checked (a web front end by name)"),
    ("prompty", "-prompty", "WaffleLapkin/jj-prompty", "not checked (a jj shell prompt by name)"),
    ("prompty", "-prompty", "nitya/codespaces-prompty", "take"),
    ("prompty", "-prompty", "sachio222/chatty-checky-prompty", NO_FILES),
    ("prompty", "-prompty", "BethanyJep/social-media-assistant-prompty", NO_LICENCE),
    ("prompty", "-prompty", "marcjimz/aistudio-prompty", NO_FILES),
    ("prompty", "-prompty", "robertr2005/deepseek-prompty", "not checked"),
    ("prompty", "-prompty", "Bound3R/video-prompty", "not checked"),
    ("prompty", "-prompty", "Nojann/minimal-front-promptyx", "not checked"),
    ("prompty", "-prompty", "mafascio/agent-openai-python-prompty", "take"),
    ("prompty", "prompty-", "ezexe/prompty-prompter-pioneer-puppeteer", NO_FILES),
    ("prompty", "prompty-", "maxnormand97/prompty-employed", NOT_APP),
    ("prompty", "prompty-", "ryan-ahn/project-prompty-web", NO_FILES),
    ("prompty", "prompty-", "sethjuarez/prompty-upstream",
     "excluded: a copy of microsoft/prompty (already in the corpus)"),
    ("prompty", "prompty-", "ryan-ahn/project-prompty-server", NO_FILES),
    ("prompty", "prompty-", "Equites-Digital/prompty-tools-core", NO_FILES),
    ("prompty", "prompty-", "Equites-Digital/prompty-tools-mcp", NO_FILES),
    ("prompty", "prompty-", "Ariefrse/prompty-v0.1", NOT_APP),
    ("prompty", "prompty-", "I-Vishal-Kumar/Prompty-pics", NOT_APP),
    ("prompty", "prompty-", "meowthowl/prompty-app", NOT_APP),
    ("prompty", "prompty-", "mxm0312/prompty-nerdy", NOT_APP),
    ("prompty", "prompty-", "microsoft/aitour-e2e-dev-with-prompty-and-ai-studio", "taken above"),
    ("prompty", "prompty-", "youh4ck3dme/-peci-lne-SEO-prompty-", NO_FILES),
    ("prompty", "prompty-", "vladutdinu/prompty-api", NOT_APP),
    ("prompty", "prompty-", "Azure-Samples/agent-openai-python-prompty-langchain-pinecone",
     "taken above"),
    ("prompty", "prompty-", "FriendlyAI-PL/prompty-z-filmow", NOT_APP),
    ("prompty", "prompty-", "shirshendu-nandy/prompty-word-predictor", NOT_APP),
    ("prompty", "prompty-", "Azure-Samples/agent-python-openai-prompty-langchain", "taken above"),
    ("prompty", "prompty-", "katerina-svi/Fajne-prompty-web", NO_FILES),
    ("prompty", "prompty-", "justinfinch-copoint/prompty-gs", NO_LICENCE),
    ("prompty", "prompty-", "Vujavujavuja/prompty-prototype", NOT_APP),
    ("prompty", "prompty-", "agentit/Prompty-Veille", NOT_APP),
    ("prompty", "prompty-", "chostudio/prompty-promptflow", NO_LICENCE),
    ("prompty", "prompty-", "Prompty-Developers/auto-docs", NOT_APP),
    ("prompty", "prompty-", "aurda012/prompty-ai", NOT_APP),
    ("prompty", "prompty-", "fauzimuh258-ui/prompty-ai", NOT_APP),
    ("prompty", "prompty-", "lukaszkocela/prompty-przyk-ady-", NOT_APP),
    ("prompty", "prompty-", "Awwyy1/prompty-mvp-", NOT_APP),
    ("prompty", "prompty-", "GodsplanElot/prompty-x", NOT_APP),
    ("prompty", "prompty-", "MijeongJeon/prompty-with-langchain", "take"),
    ("dotprompt", "genkit", "firebase/genkit", "excluded: already in the corpus"),
    ("dotprompt", "genkit", "scttfrdmn/agenkit", NO_FILES),
    ("dotprompt", "genkit", "genkit-ai/genkit", "excluded: firebase/genkit's new home"),
    ("dotprompt", "genkit", "genkit-ai/genkit-dart", NO_LICENCE),
    ("dotprompt", "genkit", "Souhailned/hagenkit", NO_FILES),
    ("dotprompt", "genkit", "DEEJ4Y/genkitkraft", NO_FILES),
    ("dotprompt", "genkit", "genkit-ai/genkit-java", "take"),
    ("dotprompt", "genkit", "GonzaAhrexd/ArgenKit-Bot", NO_FILES),
    ("dotprompt", "genkit", "PDReddyDhanu/GenKit-ProStudio", NO_FILES),
    ("dotprompt", "genkit", "scttfrdmn/agenkit-go", NO_FILES),
    ("dotprompt", "genkit", "katopz/genkit", "excluded: a fork by name (*/genkit)"),
    ("dotprompt", "genkit", "pavelgj/genkit", "excluded: a fork by name (*/genkit)"),
    ("dotprompt", "genkit", "mastering-genkit/mastering-genkit-go", "take"),
    ("dotprompt", "genkit", "genkit-ai/samples", "take"),
    ("dotprompt", "genkit", "amitpatole/claude-genkit-plugin", NO_FILES),
    ("dotprompt", "genkit", "ssdeanx/Genkit-UI", "take"),
    ("dotprompt", "genkit", "RYUJSKOR/NEWYUGENKITAN", NO_FILES),
    ("dotprompt", "genkit", "Jakedismo/GenkitChat", NO_LICENCE),
    ("dotprompt", "genkit", "leehack/genkit-dart",
     "not checked (a copy of genkit-ai/genkit-dart by name)"),
    ("dotprompt", "genkit", "datyin/GenKit", NO_FILES),
    ("dotprompt", "genkit", "lorenzobunaj/Eigenkit", "not checked (not Genkit by name)"),
    ("dotprompt", "genkit", "droidyayu/GenKit-Restaurant", NO_FILES + " in the newest snapshot"),
    ("dotprompt", "genkit", "invertase/genkit-dart", NO_FILES),
    ("dotprompt", "genkit", "TheSlowpes/genkit-cowork", NO_FILES),
    ("dotprompt", "genkit", "wrongbutworks/genkit", "excluded: a fork by name (*/genkit)"),
    ("dotprompt", "genkit", "TheFireCo/genkit-plugins", "take"),
    ("dotprompt", "genkit", "genkit-ai/docsite", NO_FILES),
    ("dotprompt", "genkit", "datyin/TsGenKit", "not checked (not Genkit by name)"),
    ("dotprompt", "genkit", "vivaneiona/genkit-unstruct", NO_FILES),
    ("dotprompt", "genkit", "leehack/genkit-llamadart", "not checked"),
    ("dotprompt", "genkit", "raintr91/codegenkit", "not checked (not Genkit by name)"),
    ("dotprompt", "genkit", "danielsogl/angular-genkit-demo", NO_FILES),
    ("dotprompt", "genkit", "andybezaire/SSGenKit", "not checked (not Genkit by name)"),
    ("dotprompt", "genkit", "MISSord/DongenKit", "not checked (not Genkit by name)"),
    ("dotprompt", "genkit", "invertase/genkit-samples", NO_FILES),
    ("dotprompt", "genkit", "umud014/genkit-by-example", "take"),
    ("copilot", "copilot-prompts", "Lear-Lee/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "srikanthtn/github-copilot-prompts-files", NO_LICENCE),
    ("copilot", "copilot-prompts", "pnp/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "AlexeyAyaZelenin/copilot-prompts", NO_LICENCE),
    ("copilot", "copilot-prompts", "fchastanet/copilot-prompts", "take"),
    ("copilot", "copilot-prompts", "taylorelley/awesome-microsoft-copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "zaidsx/Microsoft-xdr-kql-and-Seccopilot-prompts",
     "not checked (KQL queries by name)"),
    ("copilot", "copilot-prompts", "nerdCopter/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "ForLear/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "vinismoraes/copilot-prompts", "take"),
    ("copilot", "copilot-prompts", "zloeber/terraform-copilot-prompts", NO_LICENCE),
    ("copilot", "copilot-prompts", "SilverAssist/copilot-prompts-kit",
     "licence not allowed (PolyForm Noncommercial)"),
    ("copilot", "copilot-prompts", "nirgeier/Copilot-Prompts-Workshop", NO_FILES),
    ("copilot", "copilot-prompts", "lioncubs/test-copilot-prompts-extension", "no snapshot"),
    ("copilot", "copilot-prompts", "xsmartbartx/COPILOT-PROMPTS", "no snapshot"),
    ("copilot", "copilot-prompts", "prashant-agheda/POC-Copilot-Prompts", "no snapshot"),
    ("copilot", "copilot-prompts", "raffertyuy/github-copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "GPID-WB/copilot-prompts", NO_LICENCE),
    ("copilot", "copilot-prompts", "Gleifhe/copilot-prompts", NO_LICENCE),
    ("copilot", "copilot-prompts", "WB-PIDA-Data-Science-Shop/copilot-prompts-pkgdev", NO_LICENCE),
    ("copilot", "copilot-prompts", "acfatah/github-copilot-prompts", "take"),
    ("copilot", "copilot-prompts", "vodkar/vscode-copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "JoshuaWink/copilot-prompts", NO_LICENCE),
    ("copilot", "copilot-prompts", "jacqle331/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "kesslernity/awesome-microsoft-copilot-prompts",
     "not checked (Microsoft 365 Copilot prompts by name)"),
    ("copilot", "copilot-prompts", "GilbertoMarques/copilot-prompts-agents", NO_FILES),
    ("copilot", "copilot-prompts", "Swp10/SF-copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "raffertyuy/github-copilot-prompts-subscriber", "take"),
    ("copilot", "copilot-prompts", "malaykasana59-cyber/github-copilot-prompts", "no snapshot"),
    ("copilot", "copilot-prompts", "gn00678465/vscode-copilot-prompts", NO_LICENCE),
    ("copilot", "copilot-prompts", "mirzoig/awesome-microsoft-copilot-prompts", "not checked"),
    ("copilot", "copilot-prompts", "SammyKrosoft/Copilot-Prompts-for-Activity-Reports",
     "not checked"),
    ("copilot", "copilot-prompts", "aminrj/ai-copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "bluepowerbbb-code/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "ehtick/pnp-copilot-prompts",
     "excluded: a copy of pnp/copilot-prompts"),
    ("copilot", "copilot-prompts", "glennmusa/copilot-prompts", "take"),
    ("copilot", "copilot-prompts", "rajchanchad0134/ros-copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "richarddwang/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "CanarysPlayground/Copilot-Prompts", NO_FILES),
    ("copilot", "copilot-prompts", "ExFed/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "JurreBrandsenInfoSupport/TechCamp-Copilot-Prompts", NO_FILES),
    ("copilot", "copilot-prompts", "joshjohanning/copilot-prompts", NO_LICENCE),
    ("copilot", "copilot-prompts", "jotave-erref/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "MariaAlineMees/Copilot-prompts", "no snapshot"),
    ("copilot", "copilot-prompts", "OwnOptic/copilot-prompts", "no snapshot"),
    ("copilot", "copilot-prompts", "silveriolaridev/dev-copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "Demysdcl/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "Onurtaci/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "chinawrj/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "daysources/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "machillef/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "mbaic/al-vsc-copilot-prompts", NO_LICENCE),
    ("copilot", "copilot-prompts", "prismahacker77/copilot-prompts-m365_outlook-cadence",
     NC),
    ("copilot", "copilot-prompts", "MCLG1661/Copilot-Prompts",
     NC),
    ("copilot", "copilot-prompts", "fehhmusic1116-prog/copilot-prompts",
     NC),
    ("copilot", "copilot-prompts", "lnittman/copilot-prompts",
     NO_LICENCE),
    ("copilot", "copilot-prompts", "softwareliberationarmy/copilot-prompts",
     NO_LICENCE),
    ("copilot", "copilot-prompts", "zzzizo/Sydney-copilot-prompts-project",
     NC),
    ("copilot", "copilot-prompts", "B00TK1D/copilot-prompts",
     NO_FILES),
    ("copilot", "copilot-prompts", "BrettOJ/github-copilot-prompts-instructions-testing",
     NO_LICENCE),
    ("copilot", "copilot-prompts", "GustavoSchiavinato/copilot-prompts",
     NC),
    ("copilot", "copilot-prompts", "JoseRenan1980/copilot-prompts",
     NC),
    ("copilot", "copilot-prompts", "Meir017/github-copilot-prompts",
     NO_FILES),
    ("copilot", "copilot-prompts", "ONestoGamer/copilot-prompts",
     NC),
    ("copilot", "copilot-prompts", "PowerSen1/copilot-prompts",
     NC),
    ("copilot", "copilot-prompts", "TejaReddy7/Copilot-Prompts",
     NC),
    ("copilot", "copilot-prompts", "ValerasNarbutas/copilot-prompts",
     NC),
    ("copilot", "copilot-prompts", "ViniciusSouza/copilot-prompts-instructions",
     "take"),
    # second pass: the rest of the list, in order
    ("copilot", "copilot-prompts", "antshc/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "beaudamore/vscode-copilot-prompts", NO_LICENCE),
    ("copilot", "copilot-prompts", "bluegrass322/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "brunogenovesi82/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "chadmcox/Copilot-Prompts", NO_FILES),
    ("copilot", "copilot-prompts", "chpkt/azure-copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "danielegpbpuppin-boop/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "edivaldoapdias/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "ewerlon/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "gabrielbfurin/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "herbetdesign/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "jmservera/gh-copilot-prompts", "take"),
    ("copilot", "copilot-prompts", "mikemainguy/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "padmanaresh1986/copilot-prompts", NO_LICENCE),
    ("copilot", "copilot-prompts", "tjtharrison/demo-python-copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "viniciusvinco-prog/copilot-prompts", NO_FILES),
    ("copilot", "copilot-prompts", "wesdles/copilot-prompts-projeto", NO_FILES),
    ("copilot", "copilot-prompts", "(end of the list)", "20 new files reached with "
     "jmservera/gh-copilot-prompts; the list then ran out"),
    ("claude", "claude-commands", "jleechanorg/claude-commands", "take"),
    ("claude", "claude-commands", "et-nuvia/claude-commands", "no snapshot"),
    ("claude", "claude-commands", "brentwpeterson/claude-commands", NO_LICENCE),
    ("claude", "claude-commands", "miftahulmahfuzh/claude-commands", NO_LICENCE),
    ("claude", "claude-commands", "henryavila/claude-commands", NO_LICENCE),
    ("claude", "claude-commands", "stiehlrod/claude-commands", "no snapshot"),
    ("claude", "claude-commands", "albertogalca/claude-commands-backup", NO_LICENCE),
    ("claude", "claude-commands", "fumito-ito/claude-commands", NO_FILES),
    ("claude", "claude-commands", "codylandry/claude-commands", NO_FILES),
    ("claude", "claude-commands", "lcuevastodoit/claude-commands", NO_LICENCE),
    ("claude", "claude-commands", "PeakBodyCoach/claude-commands", "no snapshot"),
    ("claude", "claude-commands", "ChrisJNEsc/team-claude-commands", NO_LICENCE),
    ("claude", "claude-commands", "Bigenlight/claude-commands", NO_FILES),
    ("claude", "claude-commands", "ChrisOr-Dev/claude-commands", NO_FILES),
    ("claude", "claude-commands", "paulrobinshaw/claude-commands", "licence file empty"),
    ("claude", "claude-commands", "AHartNtkn/claude-commands", NO_LICENCE),
    ("claude", "claude-commands", "(rest of the list)", "keyword switched to the more specific "
     "`claude-code-commands` (below): 2 of 16 candidates had a licence"),
    ("claude", "claude-code-commands", "claude-code-commands/claude-cmd", NO_LICENCE),
    ("claude", "claude-code-commands", "rlajous/claude-code-commands", "take"),
    ("claude", "claude-code-commands", "marcus888-techstack/claude-code-commands", NO_LICENCE),
    ("claude", "claude-code-commands", "BioMycoBit/claude-code-commands", "take"),
    ("claude", "claude-code-commands", "syou6162/claude-code-commands", "take"),
    ("claude", "claude-code-commands", "sanae-abe/claude-code-commands", NO_LICENCE),
    ("claude", "claude-code-commands", "hyamie/claude-code-commands", NO_LICENCE),
    ("claude", "claude-code-commands", "reedom/claude-code-commands", NO_LICENCE),
    ("claude", "claude-code-commands", "matsilva/claude-code-commands", NO_LICENCE),
    ("claude", "claude-code-commands", "paullarionov/claude-code-commands-cheatsheet",
     "not checked (a cheatsheet by name)"),
    ("claude", "claude-code-commands", "IIXINGCHEN/claude-code-commands", "take"),
    ("claude", "claude-code-commands", "deikka/worktree-claude-code-commands", "take"),
    # second pass: the list continued only to reach 30 new repositories (rule, point 4)
    ("claude", "claude-code-commands", "o-gi/claude-code-commands", NO_LICENCE),
    ("claude", "claude-code-commands", "HendrikYtt/claude-code-commands", NO_LICENCE),
    ("claude", "claude-code-commands", "MaalikH/claude-code-commands", NO_LICENCE),
    ("claude", "claude-code-commands", "Postman-Devrel/postman-claude-code-commands", "take"),
    ("claude", "claude-code-commands", "hidao80/claude-code-commands-collection", "take"),
    ("claude", "claude-code-commands", "(rest of the list)",
     "stopped: 30 new repositories reached (rule, point 4)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "0xR/coding-agent-eval-experiments",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "113351028-png/eval-rag-full_0424",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "1712n/wall-e", NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "22f1001439/TDS",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AI-Beat-Automations/bulldog",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AIbyFatou/llm-eval-pipeline",
     "no snapshot"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AKSML135/StrideGuard---AI-Eval-project",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "APLUniverso/iagemini", NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "(rest of the list)",
     "stopped for time: 0 of 8 candidates usable (prompts are inline in the config, or no "
     "licence); the name list (`promptfoo`) gave 3 candidates of 4 without a snapshot or files"),
    # second pass: the path list continued (this pass's listing puts 23f2002348/VirtualTA ...
    # 31shan/Virtual-TA between 22f1001439/TDS and AI-Beat-Automations/bulldog; all checked)
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "23f2002348/VirtualTA",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "23f3000686/email.json",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "23f3001375/tds-pro1",
     "file:// names only an image (.webp), no prompt file"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "23f3001930/TDS1",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "23f3001930/TDS11",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "23f3001973/tds-fastapi-ta",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "31shan/Virtual-TA",
     "file:// names only an image (.webp), no prompt file"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Abhimadras/TDS-Virtual-TA",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Ackerman233/fzy_idea",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Acurioustractor/justicehub-platform",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Ade2347/ai-testing-promptfoo",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AdithyaLingam/tds-project-1",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Adityapatel-dev/rag-chatbot-ai-testing",
     "no snapshot"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AfuaSiaw/qa-portfolio",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Agents-Digital-Enterprise/agency-agents-enterprise",
     "no snapshot"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Ahmad-Tamim-Hamad/promptfoo",
     "excluded: named like the tool (*/promptfoo)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Akshat2917-netizen/VulnGuard",
     "no snapshot"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Alan-cyber10/redbench",
     "no snapshot"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AlanGomez-Programmer/Automatizaci-n_Pruebas_Moderador_Comentarios_Tech",
     "no snapshot"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AlbanAndrieu/fastapi-sample",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Aldo1q/verified-agent-identity",
     "no snapshot"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AlekseyF7/LLM_Security_Range",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Alfredocarrera/prompent_test",
     "no snapshot"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AlqarniMohammed/prompt-eval-engine",
     "file:// names only Python prompt functions (.py), not a file of the format"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AmanDataGuy/CallOS",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AmineK92/toolshop-qa-automation",
     "no snapshot"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Anshita-Bhasin/ai-testing-series",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Antak108/chatbot-app",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Anthony12x/Semantic-Cache-for-AI",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AnthonyRonning/promptfoo-workshop",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Antonio-Bellifemine/generative-ai-testing",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AntonyHatchet/PromptTesting",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Ar3missss/ai-containment-sandbox",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Armgd/llm-wiki-claude-code",
     NO_LICENCE),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "Arthurhgian/llm-eval-harness",
     "no snapshot"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AsyncFuncAI/deepwiki-open",
     "no prompt file named by file:// (prompts inline)"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "AubHaddad/ai-invoice-assistant",
     "file:// names only JavaScript providers and assertions"),
    ("promptfoo", "promptfoo (path promptfooconfig.yaml)", "(rest of the list)",
     "stopped: 0 of 45 candidates usable (prompts inline in the config, no licence, or no "
     "snapshot); the list holds 850+ repositories, mostly course exercises"),
    ("promptfoo", "search: promptfooconfig prompts file:// prompt txt",
     "CodyAdam/pdf-bulk-summarizer", "no promptfooconfig: not a promptfoo project"),
    ("promptfoo", "search: promptfooconfig prompts file:// prompt txt", "promptfoo/promptfoo",
     "excluded: already in the corpus"),
    ("promptfoo", "search: promptfooconfig prompts file:// prompt txt",
     "christhesoul/minitest-promptfoo", NO_FILES + " (its example prompt is a .ptmpl)"),
    ("promptfoo", "search: promptfooconfig.yaml prompts file://prompts txt providers tests vars",
     "Evobaso-J/ai-gitlab-code-review", NO_LICENCE),
    ("promptfoo", "search: promptfoo prompt.json role system content {{ }}",
     "FullFact/health-misinfo-shared", "MIT, but its config names the prompt file without "
     "file:// (`prompts: prompts.txt`): not a file of the format by the rule's letter"),
    ("promptfoo", "search: promptfoo prompt.json role system content {{ }}",
     "nguyendinhquocx/code-ai", NO_LICENCE),
    ("langchain", "search: langchain load_prompt _type prompt input_variables template",
     "dimz119/learn-langchain", NO_LICENCE),
    ("langchain", "search: langchain load_prompt _type prompt input_variables template",
     "kaikang-sde/kaikang-sde.github.io", NO_FILES),
    ("langchain", "search: langchain load_prompt _type prompt input_variables template",
     "davila7/langchain-101", NO_LICENCE),
    ("langchain", "search: langchain load_prompt _type prompt input_variables template",
     "langchain-ai/langchainjs", "excluded: the tool's own home"),
    ("langchain", "search: simple_prompt.yaml _type prompt template_format f-string",
     "MoritzLaurer/prompt_templates", NO_FILES + " (its own YAML format, no _type)"),
    ("langchain", "search: simple_prompt.yaml _type prompt template_format f-string",
     "chain-ml/council", NO_FILES),
    ("langchain", "search: few_shot examples example_prompt _type few_shot yaml",
     "micahyoung/few-shot-exemplar-utils", NO_FILES),
    ("langchain", "search: few_shot examples example_prompt _type few_shot yaml",
     "atomic-loops/AI-training-module", NO_FILES),
    ("langchain", "search: _type chat messages prompt json langchain",
     "RakeshAnvekar/LangChain_Prompts_Component", NO_LICENCE),
    ("langchain", "search: _type chat messages prompt json langchain",
     "roryp/langchain-for-beginners", NO_FILES),
    ("langchain", "(all queries)", "(end)", "0 of 10 candidates usable: load_prompt files sit "
     "in tutorials without a licence"),
]

FORMATS = {"prompty": "prompty", "dotprompt": "dotprompt", "copilot": "copilot", "claude": "claude"}
SHORT = {"Azure-Samples/contoso-chat-csharp-prompty": "ccs",
         "Azure-Samples/summarization-openai-csharp-prompty": "sum",
         "jonathanscholtes/Azure-AI-RAG-CSharp-Prompty": "jsrag",
         "microsoft/aitour-e2e-dev-with-prompty-and-ai-studio": "aitour",
         "Azure-Samples/agent-openai-python-prompty-langchain-pinecone": "pine",
         "Azure-Samples/agent-python-openai-prompty-langchain": "apl",
         "nitya/codespaces-prompty": "nitya",
         "mafascio/agent-openai-python-prompty": "mafa",
         "MijeongJeon/prompty-with-langchain": "mjl",
         "genkit-ai/genkit-java": "gjava", "mastering-genkit/mastering-genkit-go": "mgo",
         "genkit-ai/samples": "gsam", "ssdeanx/Genkit-UI": "gui",
         "TheFireCo/genkit-plugins": "tfc", "umud014/genkit-by-example": "gbe",
         "fchastanet/copilot-prompts": "fch", "vinismoraes/copilot-prompts": "vin",
         "acfatah/github-copilot-prompts": "acf",
         "raffertyuy/github-copilot-prompts-subscriber": "raf",
         "glennmusa/copilot-prompts": "gmu",
         "ViniciusSouza/copilot-prompts-instructions": "vsz",
         "jleechanorg/claude-commands": "jlee", "rlajous/claude-code-commands": "rla",
         "BioMycoBit/claude-code-commands": "bmb", "syou6162/claude-code-commands": "syo",
         "IIXINGCHEN/claude-code-commands": "iix", "deikka/worktree-claude-code-commands": "dei",
         "jmservera/gh-copilot-prompts": "jms",
         "Postman-Devrel/postman-claude-code-commands": "pdr",
         "hidao80/claude-code-commands-collection": "hid"}

_DOC_NAMES = {"readme.md", "license.md", "changelog.md", "contributing.md", "claude.md",
              "agents.md", "code_of_conduct.md", "security.md"}


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(repo), *args], capture_output=True,
                          check=True).stdout


def files_of(fmt: str, paths: list[str]) -> list[str]:
    if fmt == "prompty":
        return sorted(p for p in paths if p.endswith(".prompty"))
    if fmt == "dotprompt":
        return sorted(p for p in paths if p.endswith(".prompt")
                      and not posixpath.basename(p).startswith("_"))
    if fmt == "copilot":
        return sorted(p for p in paths if p.endswith(".prompt.md"))
    md = [p for p in paths if p.endswith(".md") and posixpath.basename(p).lower() not in
          _DOC_NAMES and not posixpath.basename(p).lower().startswith("readme")]
    for rule in (lambda p: p.startswith(".claude/commands/") or "/.claude/commands/" in p,
                 lambda p: p.startswith("commands/"), lambda p: "/" not in p):
        chosen = sorted(p for p in md if rule(p))
        if chosen:
            return chosen
    return []


def licence_of(text: str) -> str | None:
    if "Permission is hereby granted, free of charge" in text:
        return "MIT"
    if "Apache License" in text:
        return "Apache-2.0"
    if "Permission to use, copy, modify, and/or distribute" in text:
        return "ISC"
    if "CC0" in text or ("Creative Commons Legal Code" in text and "CC0" in text):
        return "CC0-1.0"
    if "Redistribution and use in source and binary forms" in text:
        return "BSD-3-Clause" if "Neither the name" in text else "BSD-2-Clause"
    return None


def sidecars(fmt: str, path: str, text: str, paths: set[str]) -> list[str]:
    """Files a prompt reads, by repository path, that lie in its own folder."""
    folder = posixpath.dirname(path)
    names: list[str] = []
    if fmt == "prompty":
        names = re.findall(r"\$\{file:([^}]+)\}", text)
    elif fmt == "dotprompt":
        names = [f"_{n}.prompt" for n in re.findall(r"\{\{~?>\s*([\w.-]+)", text)]
    out = []
    for name in names:
        p = posixpath.normpath(posixpath.join(folder, name.strip()))
        if p in paths and posixpath.dirname(p) == folder and p not in out:
            out.append(p)
    return out


def existing_hashes() -> set[str]:
    return {hashlib.sha256(p.read_bytes()).hexdigest() for p in CORPUS.glob("*/*/*")
            if p.is_file() and p.parts[-3] not in ("judges", "licenses", "tools")}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k != "role" for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def judge_pass(entries: list[dict[str, Any]]) -> None:
    """Run the source engines once: an input the engine never prints is recorded as
    ``unread`` (the rule derived it from the file's text, but nothing renders it), an
    engine's refusal as ``judge: refuses``, an empty rendering as ``judge: empty``."""
    sys.path.insert(0, str(CORPUS / "judges"))
    sys.path.insert(0, str(CORPUS.parent))
    import judges

    results = judges.render_all(entries)
    for e in entries:
        unread: dict[str, str] = {}
        for i, inputs in enumerate(e["inputs"]):
            result = results[(e["id"], i)]
            if isinstance(result, str):
                e["judge"] = {"refuses": result[:60]}
                break
            if not result:
                e["judge"] = {"empty": "the source engine renders no message for it"}
                break
            joined = "\n".join(m["text"] for m in result)
            for key, value in inputs.items():
                if any(s.strip() and s.strip() not in joined for s in _strings(value)):
                    unread[key.split(":", 1)[-1]] = ("derived from the file's text by the "
                                                     "rule; the engine does not print it")
        if unread and "judge" not in e:
            e["unread"] = unread


def main() -> None:
    manifest_path = CORPUS / "corpus.yaml"
    manifest = yaml.safe_load(manifest_path.read_text(encoding="utf-8"))
    have_ids = {e["id"] for e in manifest["entries"]}
    # A later pass of the same rule takes only the repositories not yet collected.
    collected = {e["repository"] for e in manifest["entries"] if e.get("selection") == RULE}
    seen = existing_hashes()
    new_entries: list[dict[str, Any]] = []
    for fmt, _kw, repo, outcome in SELECTION:
        if outcome != "take" or repo in collected:
            continue
        mirror = MIRRORS / repo.replace("/", "+") / "repo"
        paths = [p for p in git(mirror, "ls-tree", "-r", "--name-only", "HEAD").decode()
                 .split("\n") if p]
        root = git(mirror, "ls-tree", "--name-only", "HEAD").decode().split("\n")
        lic_file = next(n for n in root if re.match(r"(?i)(licen[cs]e|copying)(\.md|\.txt)?$", n))
        lic_text = git(mirror, "show", f"HEAD:{lic_file}")
        licence = licence_of(lic_text.decode("utf-8", "replace"))
        assert licence, repo
        (CORPUS / "licenses" / f"{repo.replace('/', '+')}.txt").write_bytes(lic_text)
        taken = 0
        for path in files_of(fmt, paths):
            if taken == PER_REPO:
                break
            data = git(mirror, "show", f"HEAD:{path}")
            digest = hashlib.sha256(data).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            taken += 1
            base = posixpath.basename(path)
            stem = re.sub(r"[^a-z0-9]+", "-", base.lower().rsplit(".prompt", 1)[0]
                          .rsplit(".md", 1)[0]).strip("-")
            eid = f"{SHORT[repo]}-{stem}"
            while eid in have_ids:
                eid += "-2"
            have_ids.add(eid)
            folder = CORPUS / fmt / eid
            folder.mkdir(parents=True, exist_ok=True)
            (folder / base).write_bytes(data)
            commit = git(mirror, "log", "-1", "--format=%H", "HEAD", "--", path).decode().strip()
            files: list[dict[str, Any]] = [{"name": base}]
            for side in sidecars(fmt, path, data.decode("utf-8", "replace"), set(paths)):
                sdata = git(mirror, "show", f"HEAD:{side}")
                (folder / posixpath.basename(side)).write_bytes(sdata)
                files.append({"name": posixpath.basename(side), "path": side,
                              "commit": git(mirror, "log", "-1", "--format=%H", "HEAD", "--",
                                            side).decode().strip(), "role": "sidecar"})
            entry: dict[str, Any] = {
                "id": eid, "ecosystem": fmt, "repository": repo, "path": path,
                "commit": commit or git(mirror, "rev-parse", "HEAD").decode().strip(),
                "licence": licence, "files": files, "inputs": [], "needs": [],
                "selection": RULE}
            entry["inputs"] = derive(entry, folder)
            new_entries.append(entry)
    judge_pass(new_entries)
    text = manifest_path.read_text(encoding="utf-8")
    if new_entries:
        manifest_path.write_text(text.rstrip("\n") + "\n" + yaml.safe_dump(
            new_entries, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    (CORPUS / "selection.yaml").write_text(
        "# Every candidate repository issue 22's selection rule considered (README.md), in order,\n"
        "# and what happened to it. Written by tools/collect.py.\n"
        + yaml.safe_dump({"candidates": [{"format": f, "keyword": k, "repository": r,
                                          "outcome": o} for f, k, r, o in SELECTION]},
                         sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    print(f"{len(new_entries)} entries added")


def rederive() -> None:
    """Derive the grown entries' inputs again (after a change to derive_inputs.py), in place."""
    manifest_path = CORPUS / "corpus.yaml"
    text = manifest_path.read_text(encoding="utf-8")
    entries = yaml.safe_load(text)["entries"]
    grown = [e for e in entries if e.get("selection") == RULE]
    head = text[:text.index(f"- id: {grown[0]['id']}\n")]
    for e in grown:
        e.pop("unread", None)
        e.pop("judge", None)
        e["inputs"] = derive(e, CORPUS / e["ecosystem"] / e["id"])
    judge_pass(grown)
    manifest_path.write_text(head + yaml.safe_dump(grown, sort_keys=False, allow_unicode=True,
                                                   width=100), encoding="utf-8")


if __name__ == "__main__":
    rederive() if sys.argv[1:] == ["--rederive"] else main()
