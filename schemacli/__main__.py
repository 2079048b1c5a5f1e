from schemacli.app import main

main()
